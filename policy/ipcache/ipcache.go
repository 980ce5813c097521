package ipcache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/source"
)

// Cache implements IPCache. Callers change the metadata (under mu) and
// mark prefixes dirty; the worker (worker.go) resolves dirty prefixes into
// entries, tells the listeners and advances the revision.
type Cache struct {
	log       *slog.Logger
	alloc     identity.Allocator
	listeners []Listener
	local     LocalNode
	cluster   cluster.Info
	kv        *kvSync // nil without a kvstore
	wake      chan struct{}

	mu sync.Mutex
	// prefixes holds the contributions and the entry of every prefix
	// with either; entryCount counts the entries.
	prefixes   map[netip.Prefix]prefixState
	entryCount int
	dirty      []netip.Prefix
	dirtyRev   map[netip.Prefix]Revision // oldest unapplied change of each dirty prefix
	failed     map[netip.Prefix]Revision // prefixes whose identity could not be resolved
	queued     Revision                  // the last revision handed out
	applied    Revision                  // the last revision every listener has seen
	advanced   chan struct{}             // closed (and replaced) when applied grows
	index      prefixIndex               // the prefixes of entries, sorted, for Entries and EntriesAfter
	lengths    [2][129]int               // entries per family and prefix length, for LookupByIP

	// initialSync is closed once the cluster's kvstore entries were
	// listed (at once without a kvstore); initialRev is the revision
	// that holds them.
	initialSync chan struct{}
	initialRev  Revision

	// held are the identities the cache allocated for prefixes; only the
	// worker touches it.
	held map[netip.Prefix]heldIdentity
}

var _ IPCache = (*Cache)(nil)

// Params are what a Cache needs.
type Params struct {
	Log       *slog.Logger
	Allocator identity.Allocator
	// Listeners hear of every change, in order.
	Listeners []Listener
	// Local is this node; Cluster its cluster.
	Local   LocalNode
	Cluster cluster.Info
	// KVStore, when enabled, publishes local endpoints and watches the
	// cluster's entries; Metrics (optional) counts its store operations.
	KVStore kvstore.Client
	Metrics *store.Metrics
	// PeriodicSync is how often the published entries are compared with
	// the kvstore (--kvstore-periodic-sync).
	PeriodicSync time.Duration
}

// New returns a cache; it resolves changes once the jobs of Jobs run.
func New(p Params) *Cache {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	c := newCache(p.Log, p.Allocator, p.Listeners)
	c.local, c.cluster = p.Local, p.Cluster
	if p.KVStore != nil && p.KVStore.Enabled() {
		c.kv = newKVSync(c, p.KVStore, p.Cluster, p.Log, p.Metrics, p.PeriodicSync)
	} else {
		c.markInitialSync()
	}
	return c
}

// Jobs are the goroutines of the cache: the worker that resolves
// changes and, with a kvstore, the publisher and the watcher.
func (c *Cache) Jobs() []job.Job {
	jobs := []job.Job{job.OneShot("resolve", c.run)}
	if c.kv != nil {
		jobs = append(jobs, c.kv.jobs()...)
	}
	return jobs
}

func newCache(log *slog.Logger, alloc identity.Allocator, listeners []Listener) *Cache {
	return &Cache{
		log:       log,
		alloc:     alloc,
		listeners: slices.DeleteFunc(slices.Clone(listeners), func(l Listener) bool { return l == nil }),
		wake:      make(chan struct{}, 1),
		prefixes:  map[netip.Prefix]prefixState{},
		dirtyRev:  map[netip.Prefix]Revision{},
		failed:    map[netip.Prefix]Revision{},
		advanced:  make(chan struct{}),
		held:      map[netip.Prefix]heldIdentity{},

		initialSync: make(chan struct{}),
	}
}

// normalizePrefix masks p, unmaps IPv4-mapped IPv6 addresses and drops
// zones, so that one prefix has one spelling.
func normalizePrefix(p netip.Prefix) (netip.Prefix, error) {
	if !p.IsValid() {
		return netip.Prefix{}, errors.New("prefix: not a valid prefix")
	}
	addr, bits := p.Addr().WithZone(""), p.Bits()
	if addr.Is4In6() {
		if bits < 96 {
			return netip.Prefix{}, fmt.Errorf("prefix: %s mixes IPv4-mapped and IPv6 bits", p)
		}
		addr, bits = addr.Unmap(), bits-96
	}
	return netip.PrefixFrom(addr, bits).Masked(), nil
}

// ParsePrefixOrIP reads "10.0.0.0/8", or "10.0.0.1" as its host prefix.
func ParsePrefixOrIP(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is neither a prefix nor an IP address", s)
		}
		return HostPrefix(addr), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is neither a prefix nor an IP address", s)
	}
	return normalizePrefix(p)
}

// HostPrefix returns the /32 or /128 prefix of addr.
func HostPrefix(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap().WithZone("")
	return netip.PrefixFrom(addr, addr.BitLen())
}

// UpsertMetadata implements IPCache.
func (c *Cache) UpsertMetadata(prefix netip.Prefix, src source.Source, resource ResourceID, md Metadata) (Revision, error) {
	return c.Apply(Update{Prefix: prefix, Source: src, Resource: resource, Metadata: md})
}

// RemoveMetadata implements IPCache.
func (c *Cache) RemoveMetadata(prefix netip.Prefix, src source.Source, resource ResourceID) (Revision, error) {
	return c.Apply(Update{Prefix: prefix, Source: src, Resource: resource, Remove: true})
}

// Apply implements IPCache. With no updates it changes nothing and
// returns the last revision handed out: waiting for it waits for every
// change made so far.
func (c *Cache) Apply(updates ...Update) (Revision, error) {
	prefixes := make([]netip.Prefix, len(updates))
	var errs []error
	for i, u := range updates {
		p, err := checkUpdate(u)
		if err != nil {
			errs = append(errs, fmt.Errorf("update %d (%s from %s): %w", i, u.Resource, u.Source, err))
		}
		prefixes[i] = p
	}
	if err := errors.Join(errs...); err != nil {
		return 0, fmt.Errorf("apply ipcache updates: %w", err)
	}
	c.mu.Lock()
	if len(updates) == 0 {
		defer c.mu.Unlock()
		return c.queued, nil // nothing to wait for beyond what is queued
	}
	c.queued++
	rev := c.queued
	for i, u := range updates {
		p, o := prefixes[i], owner{source: u.Source, resource: u.Resource}
		st := c.prefixes[p].expanded()
		if u.Remove {
			st.meta, _ = st.meta.remove(o)
		} else {
			st.meta = st.meta.upsert(o, u.Metadata)
		}
		c.setStateLocked(p, st)
		c.markDirtyLocked(p, rev)
	}
	c.mu.Unlock()
	c.signal()
	return rev, nil
}

// checkUpdate validates an update and returns its normalised prefix.
func checkUpdate(u Update) (netip.Prefix, error) {
	p, err := normalizePrefix(u.Prefix)
	if err != nil {
		return p, err
	}
	if _, err := source.Parse(string(u.Source)); err != nil {
		return p, fmt.Errorf("source: %w", err)
	}
	if u.Resource == "" {
		return p, errors.New("resource: empty")
	}
	return p, nil
}

// markDirtyLocked queues p for the worker, remembering the oldest
// revision it has not applied for p.
func (c *Cache) markDirtyLocked(p netip.Prefix, rev Revision) {
	if old, ok := c.dirtyRev[p]; ok {
		c.dirtyRev[p] = min(old, rev)
		return
	}
	c.dirtyRev[p] = rev
	c.dirty = append(c.dirty, p)
}

func (c *Cache) signal() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// Lookup implements IPCache.
func (c *Cache) Lookup(prefix netip.Prefix) (Entry, bool) {
	p, err := normalizePrefix(prefix)
	if err != nil {
		return Entry{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entryLocked(p)
	if e == nil {
		return Entry{}, false
	}
	return *e, true
}

// LookupByIP implements IPCache: it tries only the prefix lengths some
// entry of the family has, longest first.
func (c *Cache) LookupByIP(addr netip.Addr) (Entry, bool) {
	if !addr.IsValid() {
		return Entry{}, false
	}
	addr = addr.Unmap().WithZone("")
	fam := family(addr)
	c.mu.Lock()
	defer c.mu.Unlock()
	for bits := addr.BitLen(); bits >= 0; bits-- {
		if c.lengths[fam][bits] == 0 {
			continue
		}
		p, _ := addr.Prefix(bits)
		if e := c.entryLocked(p); e != nil {
			return *e, true
		}
	}
	return Entry{}, false
}

func family(a netip.Addr) int {
	if a.Is4() {
		return 0
	}
	return 1
}

// Entries implements IPCache.
func (c *Cache) Entries() []Entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]Entry, 0, c.entryCount)
	c.index.ascend(netip.Prefix{}, false, func(p netip.Prefix) bool {
		out = append(out, *c.entryLocked(p))
		return true
	})
	return out
}

// EntriesAfter implements IPCache: it finds the first entry by binary
// search in the sorted index and copies only the entries it returns.
func (c *Cache) EntriesAfter(within, after netip.Prefix, limit int) (page []Entry, more bool) {
	if limit <= 0 {
		return nil, false
	}
	from, inclusive := after, false
	if within.IsValid() {
		if w, err := normalizePrefix(within); err == nil {
			within = w
		}
		// The entries within lie between its first address (any length)
		// and its last address.
		if start := netip.PrefixFrom(within.Addr(), 0); !after.IsValid() || ComparePrefixes(after, start) < 0 {
			from, inclusive = start, true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	page = make([]Entry, 0, min(limit, c.index.len()))
	c.index.ascend(from, inclusive, func(p netip.Prefix) bool {
		if within.IsValid() {
			if !within.Contains(p.Addr()) {
				return p.Addr().Less(within.Addr()) // before the range: go on; after it: stop
			}
			if p.Bits() < within.Bits() {
				return true
			}
		}
		if len(page) == limit {
			more = true
			return false
		}
		page = append(page, *c.entryLocked(p))
		return true
	})
	return page, more
}

// ComparePrefixes orders prefixes by address, then by length.
func ComparePrefixes(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// Len implements IPCache.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entryCount
}

// Revision implements IPCache.
func (c *Cache) Revision() Revision {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.applied
}

// WaitForRevision implements IPCache.
func (c *Cache) WaitForRevision(ctx context.Context, rev Revision) error {
	for {
		c.mu.Lock()
		applied, advanced := c.applied, c.advanced
		c.mu.Unlock()
		if applied >= rev {
			return nil
		}
		select {
		case <-advanced:
		case <-ctx.Done():
			return fmt.Errorf("wait for ipcache revision %d (at %d): %w", rev, applied, context.Cause(ctx))
		}
	}
}

// setEntryLocked stores (or, with e nil, deletes) the entry of p.
func (c *Cache) setEntryLocked(p netip.Prefix, e *Entry) {
	st := c.prefixes[p]
	had := st.entry != nil
	st.entry = e
	c.setStateLocked(p, st)
	fam := family(p.Addr())
	switch {
	case e == nil && had:
		c.entryCount--
		c.index.remove(p)
		c.lengths[fam][p.Bits()]--
	case e != nil && !had:
		c.entryCount++
		c.index.insert(p)
		c.lengths[fam][p.Bits()]++
	}
}
