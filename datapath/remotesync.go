package datapath

import "context"

// RemoteSync is what the datapath waits for before its first full
// pass (the BPF ipcache map's reconcile, the endpoints' first
// regeneration) besides the local cluster: the remote clusters of
// ClusterMesh. The agent provides ClusterMesh's waiter as one. An error
// (--clustermesh-sync-timeout passed) is logged and the datapath goes on.
type RemoteSync interface {
	WaitForRemotesSynced(ctx context.Context) error
}
