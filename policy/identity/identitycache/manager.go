package identitycache

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// Local (CIDR) identities are allocated from the scope-local range.
const (
	minLocalIdentity = identity.ScopeLocal + 1
	maxLocalIdentity = identity.ScopeLocal + 0xffffff
)

// Manager is the Allocator: reserved identities are fixed, CIDR label
// sets get local identities, every other set a global identity of this
// cluster from the kvstore (or, in standalone mode, from memory).
type Manager struct {
	cfg        cluster.Info
	filter     *labels.Filter
	notify     *notifier
	local      *memAllocator
	mode       Mode
	kv         *kvstoreGlobal // nil in standalone mode
	standalone *memAllocator  // nil in kvstore and crd modes
	remote     *remoteCache   // identities of meshed clusters
}

var _ identity.Allocator = (*Manager)(nil)

// New returns the allocator of cluster cfg; filter (--labels)
// decides which labels of an endpoint make its identity (nil: Cilium's
// defaults).
func New(cfg cluster.Info, filter *labels.Filter, kvstoreEnabled bool, observers []identity.Observer) *Manager {
	mode := Standalone
	if kvstoreEnabled {
		mode = KVStore
	}
	return NewWithMode(cfg, filter, mode, observers)
}

// Mode is where the global identities of this cluster are allocated.
type Mode int

// The identity allocation modes.
const (
	// Standalone allocates in memory, journalled in the state dir: no
	// other agent shares the identities.
	Standalone Mode = iota
	// KVStore allocates in the kvstore (Cilium's
	// --identity-allocation-mode=kvstore).
	KVStore
	// CRD allocates CiliumIdentity objects in the Kubernetes API server
	// (--identity-allocation-mode=crd).
	CRD
)

// String is the mode's flag value ("standalone" for Standalone).
func (m Mode) String() string {
	switch m {
	case KVStore:
		return "kvstore"
	case CRD:
		return "crd"
	}
	return "standalone"
}

// NewWithMode returns the allocator of cluster cfg with global
// identities allocated as mode says; see New for filter.
func NewWithMode(cfg cluster.Info, filter *labels.Filter, mode Mode, observers []identity.Observer) *Manager {
	if filter == nil {
		filter = labels.DefaultFilter()
	}
	n := newNotifier(observers)
	mgr := &Manager{cfg: cfg, filter: filter, notify: n, local: newMemAllocator(minLocalIdentity, maxLocalIdentity, n),
		remote: newRemoteCache(n), mode: mode}
	if mode != Standalone {
		mgr.kv = newKVStoreGlobal(cfg, n)
	} else {
		first, last := identity.ClusterRange(cfg)
		mgr.standalone = newMemAllocator(first, last, n)
	}
	// Observers hear of the reserved identities first.
	for _, id := range identity.ReservedIdentities() {
		n.enqueue(identity.Change{Kind: identity.Added, Identity: id})
	}
	return mgr
}

// AllocateIdentity returns the identity of lbls, allocating it if needed,
// and takes a reference. Of an endpoint's label set only the
// identity-relevant labels (the --labels filter) count, and it gets the
// cluster label k8s:io.cilium.k8s.policy.cluster=<cluster-name> when it
// lacks it.
func (m *Manager) AllocateIdentity(ctx context.Context, lbls labels.Labels) (*identity.Identity, bool, error) {
	if len(lbls) == 0 {
		return nil, false, fmt.Errorf("allocate identity: %w: no labels", ErrInvalidLabels)
	}
	if id := reservedIdentityOf(lbls); id != nil {
		return id, false, nil
	}
	if identity.IsCIDRLabels(lbls) {
		defer m.notify.flush()
		return m.local.allocate(lbls)
	}
	lbls, err := m.identityLabels(lbls)
	if err != nil {
		return nil, false, fmt.Errorf("allocate identity: %w", err)
	}
	if m.kv != nil {
		return m.kv.allocate(ctx, lbls)
	}
	defer m.notify.flush()
	return m.standalone.allocate(lbls)
}

// Release drops a reference to an identity returned by AllocateIdentity.
func (m *Manager) Release(ctx context.Context, id *identity.Identity) (bool, error) {
	switch {
	case id == nil:
		return false, fmt.Errorf("release identity: %w: nil", ErrNotAllocated)
	case id.ID.IsReserved():
		return false, nil
	case id.ID.Scope() == identity.ScopeLocal:
		defer m.notify.flush()
		return m.local.release(id.ID)
	case m.kv != nil:
		return m.kv.release(ctx, id)
	}
	defer m.notify.flush()
	return m.standalone.release(id.ID)
}

// LookupIdentity returns the identity of lbls if it is known.
func (m *Manager) LookupIdentity(lbls labels.Labels) *identity.Identity {
	if len(lbls) == 0 {
		return nil
	}
	if id := reservedIdentityOf(lbls); id != nil {
		return id
	}
	if identity.IsCIDRLabels(lbls) {
		return m.local.lookup(lbls)
	}
	if l, ok := lbls.Get(labels.KeyPolicyCluster); ok && l.Value != m.cfg.ClusterName {
		return m.remote.lookup(m.relevantLabels(lbls)) // an identity of a meshed cluster
	}
	lbls, err := m.identityLabels(lbls)
	if err != nil {
		return nil
	}
	if m.kv != nil {
		return m.kv.lookup(lbls)
	}
	return m.standalone.lookup(lbls)
}

// LookupIdentityByID returns the identity with id if it is known.
func (m *Manager) LookupIdentityByID(id identity.NumericIdentity) *identity.Identity {
	switch {
	case id.IsReserved():
		return &identity.Identity{ID: id, Labels: identity.ReservedLabels(id)}
	case id.Scope() == identity.ScopeLocal:
		return m.local.get(id)
	case !identity.InClusterRange(m.cfg, id):
		return m.remote.get(id)
	case m.kv != nil:
		return m.kv.get(id)
	}
	return m.standalone.get(id)
}

// GetIdentities returns every known identity, sorted by id.
func (m *Manager) GetIdentities() []*identity.Identity {
	out := identity.ReservedIdentities()
	out = append(out, m.globals()...)
	out = append(out, m.remote.list()...)
	out = append(out, m.local.list()...)
	slices.SortFunc(out, func(a, b *identity.Identity) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

func (m *Manager) globals() []*identity.Identity {
	if m.kv != nil {
		return m.kv.list()
	}
	return m.standalone.list()
}

// WaitForInitialGlobalIdentities waits for the first list of this
// cluster's identities from the kvstore (at once in standalone mode).
func (m *Manager) WaitForInitialGlobalIdentities(ctx context.Context) error {
	if m.kv == nil {
		return nil
	}
	a, err := m.kv.allocator(ctx)
	if err != nil {
		return err
	}
	return a.WaitForSync(ctx)
}

// identityLabels keeps the identity-relevant labels of an endpoint's
// label set (reserved, cidr and generated labels always count) and adds the cluster
// label.
func (m *Manager) identityLabels(lbls labels.Labels) (labels.Labels, error) {
	return m.withClusterLabel(m.relevantLabels(lbls))
}

// relevantLabels keeps the identity-relevant labels of a label set.
func (m *Manager) relevantLabels(lbls labels.Labels) labels.Labels {
	var fixed, rest labels.Labels
	for _, l := range lbls {
		if l.Source == labels.SourceReserved || l.Source == labels.SourceCIDR || l.Source == labels.SourceGen {
			fixed = append(fixed, l)
		} else {
			rest = append(rest, l)
		}
	}
	relevant, _ := m.filter.Filter(rest)
	return labels.FromSlice(append(fixed, relevant...))
}

// withClusterLabel adds the cluster label, or refuses labels that claim
// another cluster.
func (m *Manager) withClusterLabel(lbls labels.Labels) (labels.Labels, error) {
	l, ok := lbls.Get(labels.KeyPolicyCluster)
	if !ok {
		return lbls.With(labels.New(labels.SourceK8s, labels.KeyPolicyCluster, m.cfg.ClusterName)), nil
	}
	if l.Value != m.cfg.ClusterName {
		return nil, fmt.Errorf("%w: %s names cluster %q, this agent allocates for cluster %q",
			ErrInvalidLabels, l, l.Value, m.cfg.ClusterName)
	}
	return lbls, nil
}

// reservedIdentityOf returns the reserved identity of a label set, as
// Cilium decides it: reserved:host wins, then reserved:remote-node, then
// a set of exactly one reserved label.
func reservedIdentityOf(lbls labels.Labels) *identity.Identity {
	reserved := func(id identity.NumericIdentity) bool {
		l, ok := lbls.Get(id.ReservedName())
		return ok && l.Source == labels.SourceReserved
	}
	for _, id := range []identity.NumericIdentity{identity.ReservedHost, identity.ReservedRemoteNode} {
		if reserved(id) {
			return &identity.Identity{ID: id, Labels: identity.ReservedLabels(id)}
		}
	}
	if len(lbls) == 1 && lbls[0].Source == labels.SourceReserved {
		if id, ok := identity.ReservedByName(lbls[0].Key); ok {
			return &identity.Identity{ID: id, Labels: identity.ReservedLabels(id)}
		}
	}
	return nil
}
