package layout

import "strings"

// The roots of the layout, as Cilium's pkg/kvstore names them.
const (
	// BasePrefix is the prefix of every key: Cilium's BaseKeyPrefix.
	BasePrefix = "cilium"
	// StatePrefix holds the state a cluster's own writers put, which
	// they re-create when it is removed: nodes, ip, identities, services.
	StatePrefix = "cilium/state"
	// CachePrefix holds what a KVStoreMesh caches of remote clusters: the
	// StatePrefix trees of each, as <CachePrefix>/<tree>/<cluster>/...
	// (see StateToCache).
	CachePrefix = "cilium/cache"
	// HeartbeatKey is updated every minute by one writer per cluster; the
	// value is the time of the write in RFC 3339, on the writer's lease.
	HeartbeatKey = "cilium/.heartbeat"
)

// StateToCache returns where a KVStoreMesh caches the state prefix of a
// remote cluster: prefix with StatePrefix replaced by CachePrefix (the
// reader adds "/<cluster>"), as Cilium's kvstore.StateToCachePrefix; a
// prefix outside StatePrefix is returned as is.
func StateToCache(prefix string) string {
	if rest, ok := strings.CutPrefix(prefix, StatePrefix); ok {
		return CachePrefix + rest
	}
	return prefix
}

// join joins key elements with "/", as Cilium's kvstore.JoinKey does for
// elements that are neither empty nor end in "/".
func join(elems ...string) string { return strings.Join(elems, "/") }
