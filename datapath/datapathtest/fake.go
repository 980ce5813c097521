package datapathtest

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy"
)

// Cell provides a new Fake as every interface of package datapath, and
// as *Fake for tests to inspect (celltest.Capture).
var Cell = cell.Group(cell.Provide(New), providers)

// providers provide the *Fake as every datapath interface.
var providers = cell.Provide(
	func(f *Fake) datapath.Loader { return f },
	func(f *Fake) datapath.PolicyMapWriter { return f },
	func(f *Fake) datapath.IPCacheMapWriter { return f },
	func(f *Fake) datapath.EndpointLinks { return f },
	func(f *Fake) datapath.NodeRoutes { return f },
)

// Fake is an in-memory datapath. It is safe for concurrent use.
type Fake struct {
	mu       sync.Mutex
	calls    []string
	failures map[string]error
	links    map[datapath.EndpointID]datapath.EndpointLink
	attached map[datapath.EndpointID]datapath.EndpointSpec
	policies map[datapath.EndpointID]policy.MapState
	ipcache  map[netip.Prefix]datapath.IPCacheMapEntry
	routes   map[netip.Prefix]netip.Addr
	// PolicyMapMax is the number of keys a policy map holds (0: no
	// limit).
	PolicyMapMax int
	nextIndex    int
}

var (
	_ datapath.Loader           = (*Fake)(nil)
	_ datapath.PolicyMapWriter  = (*Fake)(nil)
	_ datapath.IPCacheMapWriter = (*Fake)(nil)
	_ datapath.EndpointLinks    = (*Fake)(nil)
	_ datapath.NodeRoutes       = (*Fake)(nil)
)

// New returns an empty fake datapath.
func New() *Fake {
	return &Fake{
		failures:  map[string]error{},
		links:     map[datapath.EndpointID]datapath.EndpointLink{},
		attached:  map[datapath.EndpointID]datapath.EndpointSpec{},
		policies:  map[datapath.EndpointID]policy.MapState{},
		ipcache:   map[netip.Prefix]datapath.IPCacheMapEntry{},
		routes:    map[netip.Prefix]netip.Addr{},
		nextIndex: 100,
	}
}

// FailNext makes the next call of method ("Attach", "SyncPolicyMap",
// "CreateEndpointLink", ...) fail with err, without effect.
func (f *Fake) FailNext(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures[method] = err
}

// Calls returns the calls made so far, as "Method arg...".
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// record logs a call and returns the failure set for it, if any;
// f.mu is held.
func (f *Fake) record(method string, format string, args ...any) error {
	f.calls = append(f.calls, method+" "+fmt.Sprintf(format, args...))
	err := f.failures[method]
	delete(f.failures, method)
	return err
}

// Links returns the plumbed endpoints.
func (f *Fake) Links() map[datapath.EndpointID]datapath.EndpointLink {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.links)
}

// RemoveLink makes an endpoint's link vanish, as when its namespace
// went away while the agent was down.
func (f *Fake) RemoveLink(id datapath.EndpointID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.links, id)
}

// Attached returns the endpoints with programs attached.
func (f *Fake) Attached() map[datapath.EndpointID]datapath.EndpointSpec {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.attached)
}

// PolicyMap returns an endpoint's policy map and whether it has one.
func (f *Fake) PolicyMap(id datapath.EndpointID) (policy.MapState, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.policies[id]
	return m.Clone(), ok
}

// IPCacheMap returns the ipcache map.
func (f *Fake) IPCacheMap() map[netip.Prefix]datapath.IPCacheMapEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.ipcache)
}

// Routes returns the node routes: pod CIDR -> node IP.
func (f *Fake) Routes() map[netip.Prefix]netip.Addr {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.routes)
}

// CreateEndpointLink implements datapath.EndpointLinks.
func (f *Fake) CreateEndpointLink(_ context.Context, spec datapath.EndpointLinkSpec) (datapath.EndpointLink, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("CreateEndpointLink", "%d %s %s %s %s", spec.ID, spec.NetNSPath, spec.IfName, spec.IPv4, spec.IPv6); err != nil {
		return datapath.EndpointLink{}, err
	}
	if _, ok := f.links[spec.ID]; ok {
		return datapath.EndpointLink{}, fmt.Errorf("create %s: file exists", spec.HostIfName())
	}
	f.nextIndex++
	l := datapath.EndpointLink{IfName: spec.HostIfName(), IfIndex: f.nextIndex,
		MAC: fmt.Sprintf("02:00:00:00:%02x:%02x", spec.ID>>8, spec.ID&0xff), ContainerMAC: "02:00:00:01:00:01"}
	f.links[spec.ID] = l
	return l, nil
}

// DeleteEndpointLink implements datapath.EndpointLinks.
func (f *Fake) DeleteEndpointLink(_ context.Context, spec datapath.EndpointLinkSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("DeleteEndpointLink", "%d", spec.ID); err != nil {
		return err
	}
	delete(f.links, spec.ID)
	return nil
}

// LookupEndpointLink implements datapath.EndpointLinks.
func (f *Fake) LookupEndpointLink(_ context.Context, id datapath.EndpointID) (datapath.EndpointLink, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.record("LookupEndpointLink", "%d", id); err != nil {
		return datapath.EndpointLink{}, err
	}
	l, ok := f.links[id]
	if !ok {
		return l, fmt.Errorf("lookup %s: %w", id.HostIfName(), datapath.ErrLinkNotFound)
	}
	return l, nil
}

// CellOf provides f, like Cell, so that a test can restart a hive on
// the same fake datapath.
func CellOf(f *Fake) cell.Cell {
	return cell.Group(cell.Provide(func() *Fake { return f }), providers)
}
