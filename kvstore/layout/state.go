package layout

import "strconv"

// NodesPrefix is where the agents of a cluster register their nodes
// (Cilium's node store NodeStorePrefix), one key per node, NodeKey. The
// value is Cilium's node JSON (pkg/node/types.Node), on the writing
// agent's lease.
const NodesPrefix = "cilium/state/nodes/v1"

// NodesClusterPrefix returns the prefix of cluster's nodes,
// NodesPrefix/<cluster>.
func NodesClusterPrefix(cluster string) string { return join(NodesPrefix, cluster) }

// NodeKey returns the key of node name of cluster,
// NodesPrefix/<cluster>/<name>.
func NodeKey(cluster, name string) string { return join(NodesPrefix, cluster, name) }

// IPPrefix is where the agents of a cluster share their IP-to-identity
// entries (Cilium's ipcache IPIdentitiesPath), below an address space:
// IPKey. The value is Cilium's IPIdentityPair JSON, on the writing
// agent's lease.
const IPPrefix = "cilium/state/ip/v1"

// DefaultAddressSpace is the address space of every ipcache entry
// (Cilium's ipcache DefaultAddressSpace; Cilium uses no other).
const DefaultAddressSpace = "default"

// IPDefaultPrefix is the prefix of the ipcache entries of the default
// address space, IPPrefix/default: the one the agents write and watch.
const IPDefaultPrefix = IPPrefix + "/" + DefaultAddressSpace

// IPKey returns the key of an ipcache entry, IPPrefix/<space>/<ip>; ip
// is the address for a host entry ("10.0.1.5") and the prefix for a
// CIDR ("10.0.0.0/24").
func IPKey(space, ip string) string { return join(IPPrefix, space, ip) }

// IdentitiesPrefix is the base of the global identity allocator (Cilium's
// identity cache IdentitiesPath), with the allocator's sub-prefixes
// below it (AllocatorIDDir, AllocatorValueDir, AllocatorLocksDir).
const IdentitiesPrefix = "cilium/state/identities/v1"

// The directories of an allocator below its base, as Cilium's
// pkg/kvstore/allocator lays them out.
const (
	// AllocatorIDDir holds the master keys, <base>/id/<id>; the value is
	// the allocator key (for identities the canonical label list
	// "k8s:app=web;k8s:io.kubernetes.pod.namespace=default;"), without
	// a lease.
	AllocatorIDDir = "id"
	// AllocatorValueDir holds one reference per node using a key,
	// <base>/value/<key>/<node>; the value is the id in decimal, on the
	// node's lease.
	AllocatorValueDir = "value"
	// AllocatorLocksDir holds the locks taken while allocating or
	// collecting a key, <base>/locks/<key> (etcd mutexes: the holders'
	// lease keys below it).
	AllocatorLocksDir = "locks"
)

// The identity allocator's directories below IdentitiesPrefix.
const (
	// IdentitiesIDPrefix holds the identities' master keys, IdentityKey.
	IdentitiesIDPrefix = IdentitiesPrefix + "/" + AllocatorIDDir
	// IdentitiesValuePrefix holds the nodes' references,
	// IdentityValueKey.
	IdentitiesValuePrefix = IdentitiesPrefix + "/" + AllocatorValueDir
	// IdentitiesLocksPrefix holds the allocator's locks.
	IdentitiesLocksPrefix = IdentitiesPrefix + "/" + AllocatorLocksDir
)

// IdentityKey returns the master key of identity id,
// IdentitiesIDPrefix/<id>; its value is the identity's label list.
func IdentityKey(id uint32) string {
	return join(IdentitiesIDPrefix, strconv.FormatUint(uint64(id), 10))
}

// IdentityValueKey returns the reference of node (Cilium: the node's IP
// address) to the identity of the label list labels,
// IdentitiesValuePrefix/<labels>/<node>; its value is the id in decimal.
func IdentityValueKey(labels, node string) string {
	return join(IdentitiesValuePrefix, labels, node)
}

// ServicesPrefix is where a cluster's writers export its global services
// (Cilium's clustermesh store ServiceStorePrefix), ServiceKey. The value
// is Cilium's ClusterService JSON.
const ServicesPrefix = "cilium/state/services/v1"

// ServicesClusterPrefix returns the prefix of cluster's services,
// ServicesPrefix/<cluster>.
func ServicesClusterPrefix(cluster string) string { return join(ServicesPrefix, cluster) }

// ServiceKey returns the key of service namespace/name of cluster,
// ServicesPrefix/<cluster>/<namespace>/<name>.
func ServiceKey(cluster, namespace, name string) string {
	return join(ServicesPrefix, cluster, namespace, name)
}
