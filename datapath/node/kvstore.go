package node

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/clustermesh/types"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/source"
)

// NodesPrefix is where agents register their nodes, as
// <cluster>/<node> below it (Cilium's layout).
const NodesPrefix = "cilium/state/nodes/v1"

// ErrForeignNode marks a kvstore node that claims another cluster than
// the one whose prefix it is under; the watch store skips it as refused.
var ErrForeignNode = store.KindError(store.ErrRefused, "node of another cluster")

// kvSync registers the local node and mirrors the cluster's nodes into
// the manager with source kvstore. The watch store hands its events to
// the SyncStore, which writes the local node's key again when another
// writer deletes or changes it.
type kvSync struct {
	m       *NodeManager
	client  kvstore.Client
	cluster types.ClusterInfo
	log     *slog.Logger
	sync    *store.SyncStore
	watch   *store.WatchStore
}

func newKVSync(m *NodeManager, client kvstore.Client, cluster types.ClusterInfo, log *slog.Logger, metrics *store.Metrics,
	periodicSync time.Duration) *kvSync {
	k := &kvSync{m: m, client: client, cluster: cluster, log: log}
	k.sync = store.NewSyncStore(cluster.ClusterName, client, NodesPrefix,
		store.WithSyncLogger(log), store.WithSyncMetrics(metrics), store.WithPeriodicSync(periodicSync),
		store.WithOnConflict(k.onConflict))
	k.watch = store.NewWatchStore("nodes", store.KeyFactoryFunc(k.decode), k,
		store.WithLogger(log), store.WithMetrics(metrics), store.WithWriter(k.sync))
	return k
}

// watchPrefix is the prefix of this cluster's nodes.
func (k *kvSync) watchPrefix() string { return NodesPrefix + "/" + k.cluster.ClusterName }

// start registers the local node and runs the writer and the watcher.
func (k *kvSync) start(local Node) []job.Job {
	if err := k.sync.UpsertKey(context.Background(), &local); err != nil {
		k.log.Warn("Unable to register the local node", "key", NodesPrefix+"/"+local.GetKeyName(), "error", err)
	}
	return []job.Job{
		job.OneShot("kvstore-register", func(ctx context.Context, _ cell.Health) error {
			k.sync.Synced(ctx)
			k.sync.Run(ctx)
			return nil
		}),
		job.OneShot("kvstore-watch", func(ctx context.Context, _ cell.Health) error {
			k.watch.Watch(ctx, k.client, k.watchPrefix())
			return nil
		}),
	}
}

// decode is the watcher's KeyFactory: name is the node name below
// cilium/state/nodes/v1/<cluster>/. Malformed values and nodes claiming
// another cluster (ErrForeignNode) are skipped, counted and listed by the
// watch store.
func (k *kvSync) decode(name string, value []byte) (store.Key, error) {
	var n Node
	err := n.UnmarshalJSON(value)
	if err == nil {
		err = k.check(name, &n)
	}
	if err != nil {
		return nil, err
	}
	return &n, nil
}

// check compares a decoded node with its key and this cluster.
func (k *kvSync) check(name string, n *Node) error {
	switch {
	case n.Name != name:
		return fmt.Errorf("field Name: %q does not match the key's node name %q", n.Name, name)
	case n.Cluster != k.cluster.ClusterName:
		return fmt.Errorf("field Cluster: %w: %q, this is %q", ErrForeignNode, n.Cluster, k.cluster.ClusterName)
	case n.ClusterID != k.cluster.ClusterID:
		return fmt.Errorf("field ClusterID: %w: %d, this is cluster id %d", ErrForeignNode, n.ClusterID, k.cluster.ClusterID)
	}
	return nil
}

// OnUpdate hands another node to the manager; this node's own key is
// left to the local source.
func (k *kvSync) OnUpdate(key store.Key) {
	n := *key.(*Node)
	if n.Name == k.m.local.Name {
		return
	}
	n.Source = source.KVStore
	k.m.NodeUpdated(n)
}

// OnDelete withdraws a node whose key vanished (deleted, or its agent's
// lease expired).
func (k *kvSync) OnDelete(key store.Key) {
	n := *key.(*Node)
	if n.Name == k.m.local.Name {
		return
	}
	n.Source = source.KVStore
	k.m.NodeDeleted(n)
}

// skipped returns how many kvstore nodes are skipped now, and the last.
func (k *kvSync) skipped() (malformed, refused int, last string) {
	st := k.watch.SkipStats()
	if st.Total() > 0 {
		last = fmt.Sprintf("%s: %v", st.Last.Key, st.Last.Err)
	}
	return st.Malformed, st.Refused, last
}
