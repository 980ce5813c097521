package endpoint

import (
	"cmp"
	"errors"
	"log/slog"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"sync"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Errors of the manager; the returned errors wrap them.
var (
	// ErrExists: an endpoint with the id exists.
	ErrExists = errors.New("endpoint exists")
	// ErrNotFound: no endpoint has the id.
	ErrNotFound = errors.New("endpoint not found")
)

// Params are the manager's collaborators.
type Params struct {
	Links datapath.EndpointLinks
	// Loader attaches programs; nil: the node has no BPF datapath (the
	// endpoints are plumbed and routed, and policy is not enforced).
	Loader datapath.Loader
	// PolicyMaps writes map states; nil as for Loader.
	PolicyMaps datapath.PolicyMapWriter
	IPAM       *ipam.IPAM
	Identities identity.Allocator
	IPCache    ipcache.IPCache
	Policy     *policy.Repository
	// StateDir is the directory of the endpoints' state files; empty:
	// none are written.
	StateDir string
	// MTU of the endpoints' veths; 0 is 1500.
	MTU int
	// ClusterName is this cluster's name: an endpoint's cluster label
	// (io.cilium.k8s.policy.cluster) may name only it; empty: unchecked.
	ClusterName string
	Log         *slog.Logger
}

// Manager manages the endpoints of this node. It is safe for concurrent
// use; creations, deletions, regenerations and restores run one at a
// time.
type Manager struct {
	p Params

	ops sync.Mutex // serialises the operations that change the datapath

	mu  sync.RWMutex
	eps map[datapath.EndpointID]*endpoint

	// localRestored is closed when RestoreLocal is done, restored when
	// RestoreIdentities first succeeded.
	localRestored, restored         chan struct{}
	localRestoredOnce, restoredOnce sync.Once

	hooksMu sync.Mutex
	hooks   []func()
}

// OnChange registers fn, called after an endpoint was added, removed or
// changed (its snapshot: state, identity, addresses), with no lock of
// the manager held; fn must not block (the CiliumEndpoint publisher
// fires a trigger).
func (m *Manager) OnChange(fn func()) {
	m.hooksMu.Lock()
	defer m.hooksMu.Unlock()
	m.hooks = append(m.hooks, fn)
}

// changed calls the OnChange functions.
func (m *Manager) changed() {
	m.hooksMu.Lock()
	hooks := m.hooks
	m.hooksMu.Unlock()
	for _, fn := range hooks {
		fn()
	}
}

// endpoint is the manager's record of an endpoint.
type endpoint struct {
	// snap is guarded by Manager.mu; the rest by Manager.ops.
	snap Endpoint

	ident *identity.Identity
	// policy follows identity changes between regenerations.
	policy *policy.EndpointPolicy
	// attached: programs are attached with the enforcement in snap.
	attached bool
	// inIPCache: the addresses are in the ipcache.
	inIPCache bool
	// linked: the veth exists.
	linked bool
	// ipsHeld: the IPAM holds the addresses.
	ipsHeld bool
	// mapWritten: the endpoint has a policy map.
	mapWritten bool
}

// New returns a manager with no endpoints.
func New(p Params) *Manager {
	return &Manager{p: p, eps: map[datapath.EndpointID]*endpoint{},
		localRestored: make(chan struct{}), restored: make(chan struct{})}
}

// Get returns the endpoint with id.
func (m *Manager) Get(id datapath.EndpointID) (Endpoint, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ep, ok := m.eps[id]
	if !ok {
		return Endpoint{}, false
	}
	return ep.snapshot(), true
}

// snapshot copies the snapshot (m.mu held).
func (ep *endpoint) snapshot() Endpoint {
	s := ep.snap
	s.Labels = slices.Clone(s.Labels)
	s.NamedPorts = slices.Clone(s.NamedPorts)
	return s
}

// EndpointsAfter returns, sorted by id, at most limit endpoints with ids
// above after, and whether more follow.
func (m *Manager) EndpointsAfter(after datapath.EndpointID, limit int) ([]Endpoint, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := slices.Sorted(maps.Keys(m.eps))
	i := sort.Search(len(ids), func(i int) bool { return ids[i] > after })
	var out []Endpoint
	for ; i < len(ids) && len(out) < limit; i++ {
		out = append(out, m.eps[ids[i]].snapshot())
	}
	return out, i < len(ids)
}

// Endpoints returns every endpoint, sorted by id.
func (m *Manager) Endpoints() []Endpoint {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Endpoint, 0, len(m.eps))
	for _, ep := range m.eps {
		out = append(out, ep.snapshot())
	}
	slices.SortFunc(out, func(a, b Endpoint) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// update changes an endpoint's snapshot under the lock.
func (m *Manager) update(ep *endpoint, fn func(*Endpoint)) {
	m.mu.Lock()
	fn(&ep.snap)
	m.mu.Unlock()
	m.changed()
}

// setState sets an endpoint's state.
func (m *Manager) setState(ep *endpoint, s State) { m.update(ep, func(e *Endpoint) { e.State = s }) }

// EndpointAddrs returns the addresses of every endpoint (the conntrack
// GC keeps the entries of these after a restore).
func (m *Manager) EndpointAddrs() []netip.Addr {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []netip.Addr
	for _, ep := range m.eps {
		for _, a := range []netip.Addr{ep.snap.IPv4, ep.snap.IPv6} {
			if a.IsValid() {
				out = append(out, a)
			}
		}
	}
	return out
}
