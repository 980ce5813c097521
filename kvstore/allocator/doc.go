// Package allocator is a distributed ID allocator on the kvstore, in the
// layout of Cilium's pkg/kvstore/allocator, so that apiary and Cilium
// agents agree on the ids they hand out (docs/design.md, Compatibility
// with Cilium). It maps arbitrary string keys — for security
// identities, the canonical label list
// "k8s:app=web;k8s:io.kubernetes.pod.namespace=default;" — to numeric ids
// from a configured range:
//
//	<base>/id/<id>              => <key>   master key, no lease, CreateOnly
//	<base>/value/<key>/<suffix> => <id>    one reference per node, on its session lease
//	<base>/locks/<key>                     held while allocating or collecting <key>
//
// The key is stored as is, '/' included (Cilium's etcd backend does not
// encode it); a reference belongs to <key> when the only '/' after the
// "<base>/value/<key>/" prefix is none, so "a;" and "a;b;" never mix.
//
// Allocate takes the lock of the key, looks for an existing id (another
// node's reference, or a master in the local cache, confirmed with a
// read), otherwise picks a free id and creates its master with CreateOnly
// (retrying with another id when it lost a race), and writes this node's
// reference. Release drops a local reference and, with the last one,
// deletes this node's reference key. RunGC deletes masters nobody has
// referenced for two consecutive rounds; one agent at a time runs it, under
// <base>/locks/gc. References lost with an expired session lease are
// written again, and SyncLocalKeys repairs missing masters and references
// of keys in local use.
//
// The cache of every master key of the range is a store.WatchStore on
// <base>/id/; entries it cannot decode or Decode refuses are skipped by
// the watch store (their id stays occupied), which counts, logs and lists
// them (Invalid).
// Package policy/identity builds the identity allocator on it.
//
// It may import packages of cells and kvstore, nothing of policy, datapath
// or clustermesh (docs/design.md, Layers).
package allocator
