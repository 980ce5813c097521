package layout

// ClusterConfigPrefix is where each cluster publishes its configuration
// for the clusters meshing with it (Cilium's kvstore
// ClusterConfigPrefix), ClusterConfigKey.
const ClusterConfigPrefix = "cilium/cluster-config"

// ClusterConfigKey returns the key of cluster's configuration,
// ClusterConfigPrefix/<cluster>. The value is Cilium's
// CiliumClusterConfig JSON ({"id":2,"capabilities":{...}}), on the
// publisher's lease.
func ClusterConfigKey(cluster string) string { return join(ClusterConfigPrefix, cluster) }

// SyncedPrefix holds the sync canaries (Cilium's kvstore SyncedPrefix):
// a cluster's writers put SyncedKey(cluster, canary) once the prefix the
// canary names is complete, and readers in sync-canary mode wait for it.
const SyncedPrefix = "cilium/synced"

// SyncedClusterPrefix returns the prefix of cluster's canaries,
// SyncedPrefix/<cluster>.
func SyncedClusterPrefix(cluster string) string { return join(SyncedPrefix, cluster) }

// SyncedKey returns the key of cluster's sync canary named canary,
// SyncedPrefix/<cluster>/<canary>. The value is the time of the write in
// RFC 3339, on the writer's lease.
func SyncedKey(cluster, canary string) string { return join(SyncedPrefix, cluster, canary) }

// The canary names, below SyncedClusterPrefix: the writers (the sync
// stores of the agents and the clustermesh publisher) put these and the
// readers (remote clusters' watchers, Cilium's agents and KVStoreMesh)
// wait for them. Each is the base prefix of what it covers: the ipcache
// canary is IPPrefix, not IPDefaultPrefix, and the identities one is
// IdentitiesPrefix, not IdentitiesIDPrefix, as Cilium's writers name
// them. A KVStoreMesh cache names its canaries StateToCache(canary).
const (
	// CanaryNodes says the nodes of NodesPrefix are complete.
	CanaryNodes = NodesPrefix
	// CanaryIPCache says the ipcache entries of IPPrefix are complete.
	CanaryIPCache = IPPrefix
	// CanaryIdentities says the identities of IdentitiesPrefix are
	// complete.
	CanaryIdentities = IdentitiesPrefix
	// CanaryServices says the services of ServicesPrefix are complete.
	CanaryServices = ServicesPrefix
)

// PublisherLockKey returns the lock whose holder, one agent of cluster,
// publishes its ClusterConfigKey and keeps its canaries,
// BasePrefix/clustermesh-publisher/<cluster> (an etcd mutex: the
// holders' lease keys below it). apiary's own: Cilium's
// clustermesh-apiserver needs no lock.
func PublisherLockKey(cluster string) string {
	return join(BasePrefix, "clustermesh-publisher", cluster)
}
