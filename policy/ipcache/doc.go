// Package ipcache maps IP prefixes to security identities and what the
// datapath needs to reach them: the tunnel peer (the host IP of the node
// the prefix lives on), the encryption key, the Kubernetes namespace and
// pod, and named ports.
//
// Owners (the node manager, the kvstore watcher, local endpoints, policy
// CIDRs) describe prefixes through the metadata layer: UpsertMetadata
// records what one resource, from one source, says about a prefix (labels,
// or an explicit identity, tunnel peer, key, ...), and RemoveMetadata
// withdraws it. A worker resolves the contributions of every changed
// prefix into one Entry: the highest source wins (Cilium's precedence,
// package source), so a lower source never overwrites a higher one and
// removing one reveals the next; labels of all owners are merged and
// resolved to an identity (reserved ids for host, remote-node and friends,
// CIDR identities allocated on demand, global ids through the
// identity.Allocator), so a prefix with both world and node labels keeps
// the node identity. Every change gets a revision; WaitForRevision waits
// until the change is in the cache and every Listener has seen it.
// Listeners (the datapath is one) receive old and new entries in order,
// in batches.
//
// With a kvstore, local endpoints (UpsertLocalEndpoint) are published as
// Cilium's IPIdentityPair JSON under cilium/state/ip/v1/default/<ip>, and
// the entries of the other agents of the cluster are read back with
// source kvstore (flows 1 and 2 of DESIGN.md). GET /v1/ipcache and
// `apiary ipcache list|get` show the cache; the list is served a page at
// a time from EntriesAfter, which finds its first entry in a sorted
// index of the prefixes (index.go) and copies only the page.
//
// Imports: the framework's cell and job packages, the kvstore and its
// store, policy/identity, labels and source, and policyapi for NamedPort
// (the one named-port type, whose JSON is Cilium's); never the datapath,
// which listens to it through package datapath's IPCacheMapWriter.
package ipcache
