package node

import (
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/source"
)

// WatcherParams configure a ClusterWatcher.
type WatcherParams struct {
	// Manager gets the nodes.
	Manager Manager
	// Cluster is the cluster whose nodes are watched: every node must
	// carry its name and id.
	Cluster cluster.Info
	// Source tags the nodes: source.KVStore for this cluster's,
	// source.ClusterMesh for a remote cluster's.
	Source source.Source
	// Skip names a node left to another source (this agent's own).
	Skip string
	// WatchParams are the watch store's scope, prefix (default
	// layout.NodesClusterPrefix; a KVStoreMesh cache serves
	// cilium/cache/nodes/v1/<cluster>), logger, metrics, writer (this
	// agent's SyncStore under the prefix, if any) and options.
	store.WatchParams
}

// ClusterWatcher mirrors the nodes of one cluster
// (layout.NodesClusterPrefix) from a backend into the node
// manager. Watch may run again on another backend (a reconnect): nodes
// that vanished meanwhile are withdrawn once the new list is complete.
// Malformed nodes and nodes of another cluster are skipped, counted and
// listed by its watch store.
type ClusterWatcher struct {
	*store.PrefixWatcher[*Node]
	p WatcherParams
}

// NewClusterWatcher returns a watcher; Watch runs it. Its watch store
// keeps only the node names (store.WithNamesOnly): the manager holds
// the nodes, and a removed node is found again by its name.
func NewClusterWatcher(p WatcherParams) *ClusterWatcher {
	p.Options = append(slices.Clip(p.Options), store.WithNamesOnly())
	w := &ClusterWatcher{p: p}
	w.PrefixWatcher = store.NewPrefixWatcher(layout.NodesClusterPrefix(p.Cluster.ClusterName), &w.p.WatchParams, w.decode, w)
	return w
}

// decode is the watcher's Decoder: name is the node name below
// layout.NodesClusterPrefix.
func (w *ClusterWatcher) decode(name string, value []byte) (*Node, error) {
	var n Node
	err := n.UnmarshalJSON(value)
	if err == nil {
		err = w.check(name, &n)
	}
	return &n, err
}

// check compares a decoded node with its key and the cluster.
func (w *ClusterWatcher) check(name string, n *Node) error {
	c := w.p.Cluster
	switch {
	case n.Name != name:
		return fmt.Errorf("field Name: %q does not match the key's node name %q", n.Name, name)
	case n.Cluster != c.ClusterName:
		return fmt.Errorf("field Cluster: %w: %q, this is %q", ErrForeignNode, n.Cluster, c.ClusterName)
	case n.ClusterID != c.ClusterID:
		return fmt.Errorf("field ClusterID: %w: %d, this is cluster id %d", ErrForeignNode, n.ClusterID, c.ClusterID)
	}
	return nil
}

// OnUpdate hands a node to the manager.
func (w *ClusterWatcher) OnUpdate(key store.Key) {
	n := *key.(*Node)
	if w.p.Skip != "" && n.Name == w.p.Skip {
		return
	}
	n.Source = w.p.Source
	w.p.Manager.NodeUpdated(n)
}

// OnDelete withdraws a node whose key vanished. The key is its name
// below the cluster's prefix (the watch store keeps no more of it); the
// node had that name and this cluster (decode checks both).
func (w *ClusterWatcher) OnDelete(key store.Key) {
	name := key.GetKeyName()
	if w.p.Skip != "" && name == w.p.Skip {
		return
	}
	w.p.Manager.NodeDeleted(Node{Name: name, Cluster: w.p.Cluster.ClusterName, ClusterID: w.p.Cluster.ClusterID, Source: w.p.Source})
}
