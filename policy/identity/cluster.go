package identity

import "github.com/apiary-net/apiary/cells/localnode/cluster"

// ClusterRange returns the global identities cluster c allocates: its
// cluster id in the upper bits, MinAllocationIdentity and up below.
func ClusterRange(c cluster.Info) (first, last NumericIdentity) {
	shift := c.ClusterIDShift()
	base := NumericIdentity(c.ClusterID) << shift
	return base + MinAllocationIdentity, base + NumericIdentity(1)<<shift - 1
}

// ClusterIDOf returns the cluster id a global identity was allocated in,
// in a mesh laid out as c's (0 for identities that are not global).
func ClusterIDOf(c cluster.Info, id NumericIdentity) uint32 {
	if id.Scope() != ScopeGlobal {
		return 0
	}
	return uint32(id>>c.ClusterIDShift()) & c.MaxClusterID()
}

// InClusterRange reports whether id belongs to cluster c's global range.
func InClusterRange(c cluster.Info, id NumericIdentity) bool {
	first, last := ClusterRange(c)
	return id >= first && id <= last
}
