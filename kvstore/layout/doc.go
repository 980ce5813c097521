// Package layout is the one place that spells Cilium's kvstore layout:
// the prefixes and keys apiary's writers put into etcd and its readers
// watch, local and remote, with the names Cilium v1.20 gives them, so
// an apiary cluster and a Cilium one can mesh (Cilium's KVStoreMesh
// reads apiary's etcd, apiary reads what Cilium's writers publish).
//
// Writer and reader of a key both take it from here: a node registration
// (datapath/node) and the watchers of the local and remote clusters'
// nodes build the same NodeKey; the publisher (clustermesh/publish) and
// a remote's watchers (clustermesh/remote) name the sync canaries with
// the same Canary constants. A key that exists in one spelling cannot
// drift between its writer and its reader.
//
// Prefixes are spelled as Cilium's constants are, without a trailing
// slash; builders join with "/" as Cilium's kvstore.JoinKey does. A
// caller that lists the keys below a prefix adds the "/" itself, so
// that a cluster "c1" never lists the keys of a cluster "c10".
//
// The tests pin every key to the string Cilium v1.20 uses;
// hack/interop compares them with Cilium's own constants and key
// builders, and a test fails when one of the prefixes is spelled
// outside this package.
//
// The package is a leaf of plain strings and functions: it imports the
// standard library only, nothing of apiary, so any layer from kvstore
// up (kvstore, policy, datapath, clustermesh, cmd, hack) may import it.
// cells/ may not (hack/check-layers.sh): the bottom-layer leaf
// cells/localnode/cluster keeps the CiliumClusterConfig JSON type, and
// its readers and writers take the key from ClusterConfigKey here.
package layout
