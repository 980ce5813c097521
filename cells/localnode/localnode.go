package localnode

import (
	"net/netip"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
)

// LocalNode is this agent's node.
type LocalNode struct {
	// Name is the node's name (a DNS subdomain).
	Name string
	// Cluster is the cluster the node belongs to.
	Cluster cluster.Info
	// IP is the address other nodes reach this one at (the node's
	// InternalIP).
	IP netip.Addr
	// SecondaryIP is the node's address of the other family on a
	// dual-stack node (--node-ip=<IPv4>,<IPv6>); invalid otherwise.
	SecondaryIP netip.Addr
	// IPv4AllocCIDR and IPv6AllocCIDR are the node's pod CIDRs (either
	// may be invalid: none).
	IPv4AllocCIDR netip.Prefix
	IPv6AllocCIDR netip.Prefix
	// Zone is the node's topology.kubernetes.io/zone label, from its
	// Node ("" without Kubernetes or the label): topology-aware routing.
	Zone string
	// BeingDeleted: the node's Node has a deletionTimestamp or the
	// cluster autoscaler's ToBeDeletedByClusterAutoscaler taint, or is
	// gone (kube-proxy's rule, KEP-3836): load balancers should stop
	// sending it traffic (the kube-proxy health check answers 503).
	BeingDeleted bool
}

// Store holds the local node. It is safe for concurrent use.
type Store interface {
	// Get returns the local node.
	Get() LocalNode
	// Update changes the local node with fn and tells the subscribers.
	// fn must not call the store.
	Update(fn func(*LocalNode))
	// Subscribe calls fn with the local node after every Update, in
	// order; the returned function unsubscribes.
	Subscribe(fn func(LocalNode)) (unsubscribe func())
}

// store implements Store.
type store struct {
	mu     sync.Mutex
	node   LocalNode
	subs   []*func(LocalNode)
	notify sync.Mutex // serialises the delivery of updates
}

var _ Store = (*store)(nil)

// NewStore returns a store holding n, for tests and for embedders that
// build the local node themselves.
func NewStore(n LocalNode) Store { return &store{node: n} }

func (s *store) Get() LocalNode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.node
}

func (s *store) Update(fn func(*LocalNode)) {
	s.notify.Lock()
	defer s.notify.Unlock()
	s.mu.Lock()
	fn(&s.node)
	n, subs := s.node, slices.Clone(s.subs)
	s.mu.Unlock()
	for _, sub := range subs {
		(*sub)(n)
	}
}

func (s *store) Subscribe(fn func(LocalNode)) func() {
	p := &fn
	s.mu.Lock()
	s.subs = append(s.subs, p)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.subs = slices.DeleteFunc(s.subs, func(q *func(LocalNode)) bool { return q == p })
	}
}
