package node

import (
	"cmp"
	"context"
	"log/slog"
	"reflect"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// Manager knows the nodes of the cluster (and of meshed clusters).
type Manager interface {
	// NodeUpdated adds or updates a node as its Source sees it. An update
	// from a lower source than the one that owns the node is ignored.
	NodeUpdated(n Node)
	// NodeDeleted removes a node if n.Source owns it.
	NodeDeleted(n Node)
	// Nodes returns every node, sorted by cluster and name.
	Nodes() []Node
	// NodesAfter returns, sorted by cluster and name, at most limit nodes
	// that come after the node `after` (from the first when it is the
	// zero Identity), and whether more follow. It copies only the nodes
	// it returns.
	NodesAfter(after Identity, limit int) ([]Node, bool)
	// GetNode returns one node.
	GetNode(id Identity) (Node, bool)
	// LocalNode returns this agent's node.
	LocalNode() Node
	// RegistrationConflict returns the latest recent conflict on this
	// node's kvstore key: another writer changed (another agent with the
	// same node name) or deleted it and this agent wrote it again.
	RegistrationConflict() (RegistrationConflict, bool)
}

// NodeManager implements Manager. Changes are applied one at a time
// (changeMu), so handlers and the ipcache see them in order; mu guards
// the node map, so handlers may read it.
type NodeManager struct {
	log      *slog.Logger
	self     Identity // the local node's name and cluster
	local    Node     // guarded by mu
	started  bool     // guarded by mu: Start ran
	ipc      ipcache.IPCache
	handlers *handlerSet
	kv       *kvSync // nil without a kvstore

	changeMu sync.Mutex
	mu       sync.RWMutex
	nodes    map[Identity]Node
}

var _ Manager = (*NodeManager)(nil)

// NodeUpdated implements Manager.
func (m *NodeManager) NodeUpdated(n Node) {
	n = n.Clone()
	if n.Source == "" {
		n.Source = source.Unspec
	}
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	id := n.Identity()
	m.mu.Lock()
	old, existed := m.nodes[id]
	if existed && !source.AllowOverwrite(old.Source, n.Source) {
		m.mu.Unlock()
		m.log.Debug("Ignoring node update from a lower source", "node", id.String(), "owner", old.Source, "source", n.Source)
		return
	}
	m.nodes[id] = n
	m.mu.Unlock()
	if existed {
		m.log.Debug("Node updated", "node", id.String(), "source", n.Source)
		m.syncIPCache(&old, &n)
		m.handlers.update(old, n)
		return
	}
	m.log.Info("Node added", "node", id.String(), "source", n.Source, "ip", n.TunnelIP())
	m.syncIPCache(nil, &n)
	m.handlers.add(n)
}

// NodeDeleted implements Manager.
func (m *NodeManager) NodeDeleted(n Node) {
	if n.Source == "" {
		n.Source = source.Unspec
	}
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	id := n.Identity()
	m.mu.Lock()
	old, existed := m.nodes[id]
	if !existed || old.Source != n.Source {
		m.mu.Unlock()
		if existed {
			m.log.Debug("Ignoring node deletion from a source that does not own it", "node", id.String(), "owner", old.Source, "source", n.Source)
		}
		return
	}
	delete(m.nodes, id)
	m.mu.Unlock()
	m.log.Info("Node deleted", "node", id.String(), "source", n.Source)
	m.syncIPCache(&old, nil)
	m.handlers.remove(old)
}

// Nodes implements Manager.
func (m *NodeManager) Nodes() []Node {
	m.mu.RLock()
	out := make([]Node, 0, len(m.nodes))
	for _, n := range m.nodes {
		out = append(out, n.Clone())
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// GetNode implements Manager.
func (m *NodeManager) GetNode(id Identity) (Node, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, ok := m.nodes[id]
	if !ok {
		return Node{}, false
	}
	return n.Clone(), true
}

// LocalNode implements Manager.
func (m *NodeManager) LocalNode() Node {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.local.Clone()
}

// isLocal reports whether n is this agent's node (its name and cluster
// never change).
func (m *NodeManager) isLocal(n *Node) bool { return n.Identity() == m.self }

// LocalUpdated takes a change of this agent's node (its pod CIDRs from
// the Kubernetes Node with --ipam=kubernetes, arriving after start):
// the ipcache and the handlers hear of it as of any node's update, and
// the kvstore registration is written again. A node of another name or
// cluster, or one equal to the current, is ignored.
func (m *NodeManager) LocalUpdated(n Node) {
	if n.Identity() != m.self {
		m.log.Warn("Ignoring a local node of another name", "node", n.Identity().String(), "local", m.self.String())
		return
	}
	m.mu.Lock()
	if reflect.DeepEqual(m.local, n) {
		m.mu.Unlock()
		return
	}
	m.local = n.Clone()
	started := m.started
	m.mu.Unlock()
	if !started {
		return // Start adds it
	}
	m.log.Info("Local node changed", "node", m.self.String(), "ipv4-alloc-cidr", n.IPv4AllocCIDR, "ipv6-alloc-cidr", n.IPv6AllocCIDR)
	m.NodeUpdated(n)
	if m.kv != nil {
		m.kv.register(n)
	}
}

// validate runs NodeValidateImplementation of every handler for every
// node; changes wait until it is done.
func (m *NodeManager) validate(ctx context.Context) error {
	m.changeMu.Lock()
	defer m.changeMu.Unlock()
	m.handlers.validate(ctx, m.Nodes())
	return nil
}
