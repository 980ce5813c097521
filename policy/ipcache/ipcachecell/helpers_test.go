package ipcachecell_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/labels"
)

// fakeAllocator hands out local identities for CIDR label sets and
// global ones (from 1000) for the rest, counting references.
type fakeAllocator struct {
	mu       sync.Mutex
	byLabels map[string]*allocated
	byID     map[identity.NumericIdentity]*allocated
	local    identity.NumericIdentity
	global   identity.NumericIdentity
	fail     error
	released []identity.NumericIdentity
}

type allocated struct {
	id   *identity.Identity
	refs int
}

var _ identity.Allocator = (*fakeAllocator)(nil)

func newFakeAllocator() *fakeAllocator {
	return &fakeAllocator{
		byLabels: map[string]*allocated{}, byID: map[identity.NumericIdentity]*allocated{},
		local: identity.ScopeLocal, global: 999,
	}
}

func (f *fakeAllocator) AllocateIdentity(_ context.Context, lbls labels.Labels) (*identity.Identity, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail != nil {
		return nil, false, f.fail
	}
	key := lbls.SortedList()
	if a, ok := f.byLabels[key]; ok {
		a.refs++
		return a.id, false, nil
	}
	var id identity.NumericIdentity
	if identity.IsCIDRLabels(lbls) {
		f.local++
		id = f.local
	} else {
		f.global++
		id = f.global
	}
	a := &allocated{id: &identity.Identity{ID: id, Labels: lbls}, refs: 1}
	f.byLabels[key], f.byID[id] = a, a
	return a.id, true, nil
}

func (f *fakeAllocator) Release(_ context.Context, id *identity.Identity) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.byID[id.ID]
	if !ok {
		return false, fmt.Errorf("release of unknown identity %d", id.ID)
	}
	a.refs--
	if a.refs > 0 {
		return false, nil
	}
	delete(f.byID, id.ID)
	delete(f.byLabels, a.id.Labels.SortedList())
	f.released = append(f.released, id.ID)
	return true, nil
}

func (f *fakeAllocator) LookupIdentity(lbls labels.Labels) *identity.Identity {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.byLabels[lbls.SortedList()]; ok {
		return a.id
	}
	return nil
}

func (f *fakeAllocator) LookupIdentityByID(id identity.NumericIdentity) *identity.Identity {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.byID[id]; ok {
		return a.id
	}
	return nil
}

func (f *fakeAllocator) GetIdentities() []*identity.Identity {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*identity.Identity
	for _, a := range f.byID {
		out = append(out, a.id)
	}
	slices.SortFunc(out, func(a, b *identity.Identity) int { return int(a.ID) - int(b.ID) })
	return out
}

func (f *fakeAllocator) WaitForInitialGlobalIdentities(context.Context) error { return nil }

// refs returns the references held on the identity of lbls.
func (f *fakeAllocator) refs(id identity.NumericIdentity) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.byID[id]; ok {
		return a.refs
	}
	return 0
}

func (f *fakeAllocator) setFail(err error) {
	f.mu.Lock()
	f.fail = err
	f.mu.Unlock()
}

// recorder is a listener that keeps every change as a line.
type recorder struct {
	mu      sync.Mutex
	lines   []string
	batches int
	revs    []ipcache.Revision
}

func (r *recorder) OnIPCacheChanged(rev ipcache.Revision, changes []ipcache.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches++
	r.revs = append(r.revs, rev)
	for _, c := range changes {
		r.lines = append(r.lines, c.Prefix.String()+": "+ipcachetest.Describe(c.Old)+" -> "+ipcachetest.Describe(c.New))
	}
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.lines
	r.lines = nil
	return out
}

// testNode is the local node of the tests.
var testNode = ipcache.LocalNode{Name: "node-a", IP: netip.MustParseAddr("192.0.2.10")}

// baseCells are what the ipcache cell needs besides the allocator: the
// local-node store of node, in cluster "default".
func baseCells(alloc identity.Allocator, node ipcache.LocalNode) cell.Cell {
	local := localnode.LocalNode{Name: node.Name, IP: node.IP, Cluster: cluster.DefaultInfo}
	return cell.Provide(
		func() identity.Allocator { return alloc },
		func() localnode.Store { return localnode.NewStore(local) },
	)
}

// startCache starts the ipcache cell with a fake allocator and a recorder.
func startCache(t *testing.T) (ipcache.IPCache, *fakeAllocator, *recorder) {
	t.Helper()
	rec := &recorder{}
	c, alloc := startCacheWithAlloc(t, rec)
	return c, alloc, rec
}

// startCacheWithAlloc starts the ipcache cell with a fake allocator and
// the listener l.
func startCacheWithAlloc(t *testing.T, l ipcache.Listener) (ipcache.IPCache, *fakeAllocator) {
	t.Helper()
	alloc := newFakeAllocator()
	var c ipcache.IPCache
	celltest.Start(t, baseCells(alloc, testNode), ipcachecell.Cell,
		cell.Provide(func() ipcache.ListenerOut { return ipcache.ListenerOut{Listener: l} }),
		celltest.Capture(&c))
	return c, alloc
}

// entryOf describes the entry of prefix like ipcachetest.Describe.
func entryOf(c ipcache.IPCache, prefix string) string {
	return ipcachetest.EntryOf(c, netip.MustParsePrefix(prefix))
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func lbls(ss ...string) labels.Labels { return labels.MustParseList(ss...) }

func joinLines(ss []string) string { return strings.Join(ss, "\n") }
