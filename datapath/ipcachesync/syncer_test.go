package ipcachesync_test

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/ipcachesync"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// cache is the part of an ipcache the syncer reads: its entries and
// revision.
type cache struct {
	ipcache.IPCache // nil: other methods are not called
	entries         []ipcache.Entry
	rev             ipcache.Revision
}

func (c *cache) Entries() []ipcache.Entry   { return c.entries }
func (c *cache) Revision() ipcache.Revision { return c.rev }
func entry(p string, id int) ipcache.Entry {
	return ipcache.Entry{Prefix: netip.MustParsePrefix(p), Identity: identity.NumericIdentity(id)}
}

func upsert(e ipcache.Entry) ipcache.Change { return ipcache.Change{Prefix: e.Prefix, New: &e} }

func remove(e ipcache.Entry) ipcache.Change { return ipcache.Change{Prefix: e.Prefix, Old: &e} }

func ids(m map[netip.Prefix]datapath.IPCacheMapEntry) map[string]identity.NumericIdentity {
	out := map[string]identity.NumericIdentity{}
	for p, e := range m {
		out[p.String()] = e.Identity
	}
	return out
}

func wantMap(t *testing.T, f *datapathtest.Fake, want map[string]identity.NumericIdentity) {
	t.Helper()
	got := ids(f.IPCacheMap())
	if len(got) != len(want) {
		t.Fatalf("map %v, want %v", got, want)
	}
	for p, id := range want {
		if got[p] != id {
			t.Fatalf("map %v, want %v", got, want)
		}
	}
}

func TestSyncer(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	// An entry a previous agent left behind.
	if err := f.ApplyIPCache([]datapath.IPCacheMapChange{{Entry: datapath.IPCacheMapEntry{
		Prefix: netip.MustParsePrefix("10.9.9.9/32"), Identity: 999}}}); err != nil {
		t.Fatal(err)
	}
	kicks := 0
	c := &cache{}
	s := ipcachesync.New(f, c, slog.New(slog.DiscardHandler), func() { kicks++ })

	a, b := entry("10.0.1.2/32", 300), entry("10.0.1.3/32", 301)
	s.OnIPCacheChanged(1, []ipcache.Change{upsert(a), upsert(b)})
	if kicks != 1 || s.Stats().Pending != 2 {
		t.Fatalf("after a change: %d kicks, stats %+v; want 1 kick and 2 pending", kicks, s.Stats())
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Before the initial reconcile, what the map holds beyond the
	// changes stays: the cache may not have everything yet.
	wantMap(t, f, map[string]identity.NumericIdentity{"10.9.9.9/32": 999, "10.0.1.2/32": 300, "10.0.1.3/32": 301})

	// b goes (revision 2), then the initial reconcile reads the cache at
	// revision 2; a change of revision 3 arrives meanwhile and stays queued.
	s.OnIPCacheChanged(2, []ipcache.Change{remove(b)})
	d := entry("10.0.1.4/32", 302)
	s.OnIPCacheChanged(3, []ipcache.Change{upsert(d)})
	c.entries, c.rev = []ipcache.Entry{a}, 2
	if err := s.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	wantMap(t, f, map[string]identity.NumericIdentity{"10.0.1.2/32": 300})
	if st := s.Stats(); !st.Reconciled || st.ReconcileRemoved != 2 || st.Pending != 1 {
		t.Fatalf("stats after the reconcile %+v, want reconciled, 2 removed (stale and b), 1 pending", st)
	}
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wantMap(t, f, map[string]identity.NumericIdentity{"10.0.1.2/32": 300, "10.0.1.4/32": 302})

	// A failed write is reported; the next Flush reconciles in full.
	s.OnIPCacheChanged(4, []ipcache.Change{remove(a)})
	errFull := errors.New("map full")
	f.FailNext("ApplyIPCache", errFull)
	if err := s.Flush(ctx); !errors.Is(err, errFull) {
		t.Fatalf("Flush = %v, want %v", err, errFull)
	}
	if st := s.Stats(); !errors.Is(st.LastError, errFull) || !s.NeedsResync() {
		t.Fatalf("after a failed write: stats %+v, resync %v", st, s.NeedsResync())
	}
	c.entries, c.rev = []ipcache.Entry{d}, 4
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wantMap(t, f, map[string]identity.NumericIdentity{"10.0.1.4/32": 302})
	if st := s.Stats(); st.LastError != nil || s.NeedsResync() {
		t.Fatalf("after the retry: stats %+v", st)
	}
}
