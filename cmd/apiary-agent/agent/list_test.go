package agent_test

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

// startAgentWithIPCache starts the whole agent and returns its socket
// and ipcache.
func startAgentWithIPCache(t *testing.T) (string, ipcache.IPCache) {
	t.Helper()
	socket, flags := tempFlags(t)
	var ipc ipcache.IPCache
	celltest.StartWithFlags(t, flags, agent.Agent, celltest.Capture(&ipc))
	return socket, ipc
}

// testPrefix is the i-th /32 of 10.0.0.0/8.
func testPrefix(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 32)
}

// kvstoreUpdate says (or, with remove, withdraws) what the kvstore says
// about the i-th prefix.
func kvstoreUpdate(i int, remove bool) ipcache.Update {
	p := testPrefix(i)
	return ipcache.Update{
		Prefix: p, Source: source.KVStore, Resource: ipcache.ResourceID("kvstore/" + p.String()), Remove: remove,
		Metadata: ipcache.Metadata{Identity: identity.NumericIdentity(256 + i%1000), TunnelPeer: netip.MustParseAddr("192.0.2.20")},
	}
}

// apply applies updates and waits until the cache has them.
func apply(t *testing.T, ipc ipcache.IPCache, updates []ipcache.Update) {
	t.Helper()
	rev, err := ipc.Apply(updates...)
	if err != nil {
		t.Fatal(err)
	}
	if err := ipc.WaitForRevision(t.Context(), rev); err != nil {
		t.Fatal(err)
	}
}

// fill puts prefixes [from, to) in the cache, in batches.
func fill(t *testing.T, ipc ipcache.IPCache, from, to int) {
	t.Helper()
	const batch = 10_000
	for lo := from; lo < to; lo += batch {
		updates := make([]ipcache.Update, 0, batch)
		for i := lo; i < min(lo+batch, to); i++ {
			updates = append(updates, kvstoreUpdate(i, false))
		}
		apply(t, ipc, updates)
	}
}

// entryKey is what the test compares of an entry.
func entryKey(prefix string, id uint32, src string) string {
	return prefix + " " + strconv.FormatUint(uint64(id), 10) + " " + src
}

// pageCost is what listing the whole cache a page at a time cost.
type pageCost struct {
	pages     int
	maxAlloc  uint64 // bytes allocated by the costliest page request
	meanAlloc uint64
	total     uint64
}

// listAllPages lists the ipcache through the API in pages of limit
// entries, checks that the pages are bounded and that together they are
// exactly the cache's entries, and measures the bytes allocated (in this
// process: agent and client) by each page request.
func listAllPages(t *testing.T, socket string, ipc ipcache.IPCache, limit int) pageCost {
	t.Helper()
	var want []string
	for _, e := range ipc.Entries() {
		want = append(want, entryKey(e.Prefix.String(), uint32(e.Identity), string(e.Source)))
	}
	c := client.New(socket)
	defer c.Close()
	var cost pageCost
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before, n := ms.TotalAlloc, 0
	for page, err := range c.IPCachePages(t.Context(), "", client.ListOptions{Limit: limit}) {
		runtime.ReadMemStats(&ms)
		alloc := ms.TotalAlloc - before
		if err != nil {
			t.Fatalf("page %d: %v", cost.pages, err)
		}
		cost.pages++
		cost.total += alloc
		cost.maxAlloc = max(cost.maxAlloc, alloc)
		if len(page.Entries) > limit {
			t.Fatalf("page %d holds %d entries, more than the limit %d", cost.pages, len(page.Entries), limit)
		}
		for _, e := range page.Entries {
			if n >= len(want) || entryKey(e.Prefix, e.Identity, e.Source) != want[n] {
				t.Fatalf("entry %d of the listing is %+v, want %q", n, e, want[min(n, len(want)-1)])
			}
			n++
		}
		if (page.Continue == "") != (n == len(want)) {
			t.Fatalf("page %d: continue %q after %d of %d entries", cost.pages, page.Continue, n, len(want))
		}
		runtime.ReadMemStats(&ms)
		before = ms.TotalAlloc
	}
	if n != len(want) {
		t.Fatalf("listing returned %d entries, want %d", n, len(want))
	}
	cost.meanAlloc = cost.total / uint64(cost.pages)
	return cost
}

// TestIPCacheListCostsAPage lists an ipcache of 10k and then of 100k
// entries in pages of 1000: every page is bounded, the pages together
// are exactly the cache, and a page request allocates no more with 100k
// entries than with 10k (a list whose cost grew with the table would
// allocate ten times more).
func TestIPCacheListCostsAPage(t *testing.T) {
	if testing.Short() {
		t.Skip("fills the ipcache with 100k entries")
	}
	const limit = 1000
	socket, ipc := startAgentWithIPCache(t)
	fill(t, ipc, 0, 10_000)
	smallLen := ipc.Len() // the agent's own node is in the cache too
	small := listAllPages(t, socket, ipc, limit)
	fill(t, ipc, 10_000, 100_000)
	largeLen := ipc.Len()
	large := listAllPages(t, socket, ipc, limit)
	t.Logf("pages of %d entries: %d entries in %d pages, %d KiB a page (max %d KiB); %d entries in %d pages, %d KiB a page (max %d KiB), %d MiB for the whole listing",
		limit, smallLen, small.pages, small.meanAlloc>>10, small.maxAlloc>>10,
		largeLen, large.pages, large.meanAlloc>>10, large.maxAlloc>>10, large.total>>20)
	if wantPages := (largeLen + limit - 1) / limit; large.pages != wantPages {
		t.Errorf("%d pages, want %d", large.pages, wantPages)
	}
	if large.maxAlloc > 2*small.meanAlloc {
		t.Errorf("a page request allocated up to %d bytes with %d entries, more than twice the %d a page took with %d entries: the cost of a page grows with the table",
			large.maxAlloc, largeLen, small.meanAlloc, smallLen)
	}
}

// TestIPCacheContinueUnderChurn pages through the ipcache while other
// entries come and go between (and during) the page requests: no entry
// comes twice, the order holds, and every entry that exists throughout
// comes once.
func TestIPCacheContinueUnderChurn(t *testing.T) {
	socket, ipc := startAgentWithIPCache(t)
	const stable = 3000 // even indices 0, 2, ... exist throughout
	var updates []ipcache.Update
	for i := range stable {
		updates = append(updates, kvstoreUpdate(2*i, false))
	}
	apply(t, ipc, updates)

	ctx, cancel := context.WithCancel(t.Context())
	churned := make(chan int)
	done := make(chan struct{})
	var churnErr error
	go func() {
		defer close(done)
		churnErr = churn(ctx, ipc, 2*stable, churned)
	}()
	defer func() {
		cancel()
		<-done
		if churnErr != nil {
			t.Error(churnErr)
		}
	}()

	c := client.New(socket)
	defer c.Close()
	seen := map[string]bool{}
	var last netip.Prefix
	pages, rounds := 0, 0
	for page, err := range c.IPCachePages(t.Context(), "", client.ListOptions{Limit: 50}) {
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, e := range page.Entries {
			checkNext(t, seen, &last, e)
		}
		rounds = <-churned // at least one churn round between two pages
	}
	for i := range stable {
		if p := testPrefix(2 * i).String(); !seen[p] {
			t.Errorf("%s existed throughout and was not listed", p)
		}
	}
	if pages < stable/50 || rounds < pages {
		t.Errorf("%d pages, %d churn rounds: the test did not interleave", pages, rounds)
	}
}

// checkNext checks that e comes after every entry before it.
func checkNext(t *testing.T, seen map[string]bool, last *netip.Prefix, e models.IPCacheEntry) {
	t.Helper()
	p := netip.MustParsePrefix(e.Prefix)
	if seen[e.Prefix] {
		t.Fatalf("%s listed twice", e.Prefix)
	}
	if last.IsValid() && ipcache.ComparePrefixes(*last, p) >= 0 {
		t.Fatalf("%s listed after %s", p, *last)
	}
	seen[e.Prefix], *last = true, p
}

// churn adds odd-indexed prefixes (each round in a new spot across the
// whole range) and removes those of the round before, until ctx ends,
// offering the number of rounds done after each.
func churn(ctx context.Context, ipc ipcache.IPCache, span int, rounds chan<- int) error {
	var prev []int
	for round := 1; ; round++ {
		var updates []ipcache.Update
		var added []int
		for k := range 40 {
			i := (round*7919+k*(span/40))%span | 1
			added = append(added, i)
			updates = append(updates, kvstoreUpdate(i, false))
		}
		for _, i := range prev {
			updates = append(updates, kvstoreUpdate(i, true))
		}
		rev, err := ipc.Apply(updates...)
		if err != nil {
			return fmt.Errorf("churn: %w", err)
		}
		if ipc.WaitForRevision(ctx, rev) != nil {
			return nil
		}
		prev = added
		select {
		case rounds <- round:
		case <-ctx.Done():
			return nil
		default: // the lister has not asked: churn on, concurrently
		}
	}
}
