package ipcachecell_test

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/source"
)

func TestListenersSeeEveryChangeInOrder(t *testing.T) {
	c, _, rec := startCache(t)
	done := ipcachetest.Applied(t, c)
	peer := netip.MustParseAddr("192.0.2.20")
	steps := []struct {
		name string
		do   func() (ipcache.Revision, error)
		want string
	}{
		{"add", func() (ipcache.Revision, error) {
			return c.UpsertMetadata(pfx("10.0.1.5/32"), source.KVStore, "kvstore/10.0.1.5", ipcache.Metadata{Identity: 300, TunnelPeer: peer})
		}, "10.0.1.5/32: none -> 300/kvstore via 192.0.2.20"},
		{"higher source", func() (ipcache.Revision, error) {
			return c.UpsertMetadata(pfx("10.0.1.5/32"), source.Local, "endpoint/10.0.1.5", ipcache.Metadata{Identity: 400})
		}, "10.0.1.5/32: 300/kvstore via 192.0.2.20 -> 400/local via 192.0.2.20"},
		{"lower source changes nothing", func() (ipcache.Revision, error) {
			return c.UpsertMetadata(pfx("10.0.1.5/32"), source.Generated, "cidr/x", ipcache.Metadata{Identity: 500})
		}, ""},
		{"remove higher", func() (ipcache.Revision, error) {
			return c.RemoveMetadata(pfx("10.0.1.5/32"), source.Local, "endpoint/10.0.1.5")
		}, "10.0.1.5/32: 400/local via 192.0.2.20 -> 300/kvstore via 192.0.2.20"},
		{"remove the rest", func() (ipcache.Revision, error) {
			return c.Apply(
				ipcache.Update{Prefix: pfx("10.0.1.5/32"), Source: source.KVStore, Resource: "kvstore/10.0.1.5", Remove: true},
				ipcache.Update{Prefix: pfx("10.0.1.5/32"), Source: source.Generated, Resource: "cidr/x", Remove: true},
			)
		}, "10.0.1.5/32: 300/kvstore via 192.0.2.20 -> none"},
	}
	var last ipcache.Revision
	for _, s := range steps {
		rev, err := s.do()
		done(rev, err)
		if rev <= last {
			t.Errorf("%s: revision %d does not follow %d", s.name, rev, last)
		}
		last = rev
		if got := joinLines(rec.take()); got != s.want {
			t.Errorf("%s: listener saw %q, want %q", s.name, got, s.want)
		}
	}
	if c.Revision() != last {
		t.Errorf("Revision() = %d, want %d", c.Revision(), last)
	}
}

func TestListenersGetBatchesThatReplayToTheCache(t *testing.T) {
	replay := map[netip.Prefix]ipcache.Entry{}
	var lastRev ipcache.Revision
	inOrder := true
	l := ipcache.ListenerFunc(func(rev ipcache.Revision, changes []ipcache.Change) {
		if rev < lastRev {
			inOrder = false
		}
		lastRev = rev
		for _, ch := range changes {
			old, had := replay[ch.Prefix]
			if had != (ch.Old != nil) || had && old.Identity != ch.Old.Identity {
				inOrder = false // Old must be what the listener last saw
			}
			if ch.New == nil {
				delete(replay, ch.Prefix)
			} else {
				replay[ch.Prefix] = *ch.New
			}
		}
	})
	c := startCacheWith(t, l)
	var rev ipcache.Revision
	for i := range 300 {
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 2, byte(i / 256), byte(i % 256)}), 32)
		var err error
		rev, err = c.UpsertMetadata(p, source.KVStore, ipcache.ResourceID("r"+p.String()), ipcache.Metadata{Identity: identity.NumericIdentity(1000 + i)})
		if err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if rev, err = c.RemoveMetadata(p, source.KVStore, ipcache.ResourceID("r"+p.String())); err != nil {
				t.Fatal(err)
			}
		}
	}
	ipcachetest.Applied(t, c)(rev, nil)
	if !inOrder {
		t.Error("a change's Old was not the entry the listener last saw, or revisions went back")
	}
	if len(replay) != 200 || c.Len() != 200 {
		t.Errorf("replayed %d entries, cache has %d, want 200", len(replay), c.Len())
	}
	for _, e := range c.Entries() {
		if replay[e.Prefix].Identity != e.Identity {
			t.Errorf("%s: replay has %d, cache %d", e.Prefix, replay[e.Prefix].Identity, e.Identity)
		}
	}
}

func TestWaitForRevision(t *testing.T) {
	c, alloc, _ := startCache(t)
	rev, err := c.UpsertMetadata(pfx("10.0.0.0/8"), source.Generated, "cidr", ipcache.Metadata{Labels: lbls("cidr:10.0.0.0/8")})
	if err != nil {
		t.Fatal(err)
	}
	ipcachetest.Applied(t, c)(rev, nil)
	if _, ok := c.Lookup(pfx("10.0.0.0/8")); !ok {
		t.Fatal("entry not there once its revision is")
	}

	t.Run("a revision never handed out times out", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		err := c.WaitForRevision(ctx, rev+100)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "wait for ipcache revision") {
			t.Errorf("WaitForRevision(future) = %v", err)
		}
	})

	t.Run("a change whose identity cannot be allocated holds the revision back", func(t *testing.T) {
		alloc.setFail(errors.New("kvstore unreachable"))
		rev, err := c.UpsertMetadata(pfx("172.16.0.0/12"), source.Generated, "cidr", ipcache.Metadata{Labels: lbls("cidr:172.16.0.0/12")})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err = c.WaitForRevision(ctx, rev)
		cancel()
		if err == nil {
			t.Fatal("WaitForRevision returned while the identity could not be allocated")
		}
		alloc.setFail(nil) // the worker retries with backoff
		ipcachetest.Applied(t, c)(rev, nil)
		if e, ok := c.Lookup(pfx("172.16.0.0/12")); !ok || e.Identity.Scope() != identity.ScopeLocal {
			t.Errorf("entry after the retry = %+v, %v; want a CIDR identity", e, ok)
		}
	})
}

func TestLabelsResolveToIdentities(t *testing.T) {
	c, alloc, _ := startCache(t)
	done := ipcachetest.Applied(t, c)
	node := netip.MustParseAddr("192.0.2.20")

	done(c.UpsertMetadata(pfx("10.0.0.0/8"), source.Generated, "policy/a", ipcache.Metadata{Labels: lbls("reserved:world")}))
	cidr, _ := c.Lookup(pfx("10.0.0.0/8"))
	if cidr.Identity.Scope() != identity.ScopeLocal {
		t.Fatalf("world CIDR got identity %d, want a CIDR (local) identity", cidr.Identity)
	}
	if got := alloc.LookupIdentityByID(cidr.Identity).Labels; !identity.IsCIDRLabels(got) || !got.Has(lbls("cidr:10.0.0.0/8")[0]) {
		t.Errorf("CIDR identity labels = %s", got)
	}

	t.Run("a second owner of the same labels takes no new reference", func(t *testing.T) {
		done(c.UpsertMetadata(pfx("10.0.0.0/8"), source.Generated, "policy/b", ipcache.Metadata{Labels: lbls("cidr:10.0.0.0/8")}))
		if got, _ := c.Lookup(pfx("10.0.0.0/8")); got.Identity != cidr.Identity || alloc.refs(cidr.Identity) != 1 {
			t.Errorf("identity %d with %d refs, want %d with 1", got.Identity, alloc.refs(cidr.Identity), cidr.Identity)
		}
	})

	t.Run("world and node labels keep the node identity", func(t *testing.T) {
		done(c.UpsertMetadata(pfx("192.0.2.20/32"), source.Generated, "policy/a", ipcache.Metadata{Labels: lbls("reserved:world")}))
		done(c.UpsertMetadata(pfx("192.0.2.20/32"), source.KVStore, "node/default/node-b", ipcache.Metadata{
			Labels: lbls("reserved:remote-node"), TunnelPeer: node,
		}))
		if got := entryOf(c, "192.0.2.20/32"); got != "6/kvstore via 192.0.2.20" {
			t.Errorf("entry = %s, want the remote-node identity 6 from the kvstore", got)
		}
		done(c.UpsertMetadata(pfx("192.0.2.10/32"), source.ClusterMesh, "policy/x", ipcache.Metadata{Labels: lbls("cidr:192.0.2.10/32")}))
		done(c.UpsertMetadata(pfx("192.0.2.10/32"), source.Local, "node/default/node-a", ipcache.Metadata{Labels: lbls("reserved:host")}))
		if got := entryOf(c, "192.0.2.10/32"); got != "1/local" {
			t.Errorf("own node = %s, want host", got)
		}
	})

	t.Run("removing the last owner releases the CIDR identity", func(t *testing.T) {
		done(c.RemoveMetadata(pfx("10.0.0.0/8"), source.Generated, "policy/a"))
		done(c.RemoveMetadata(pfx("10.0.0.0/8"), source.Generated, "policy/b"))
		if _, ok := c.Lookup(pfx("10.0.0.0/8")); ok || !slices.Contains(alloc.released, cidr.Identity) {
			t.Errorf("entry still there (%v) or identity %d not released (%v)", ok, cidr.Identity, alloc.released)
		}
		// The world and CIDR labels of the node IPs never allocated
		// anything: the node labels won.
		if ids := alloc.GetIdentities(); len(ids) != 0 {
			t.Errorf("identities left: %v, want none", ids)
		}
	})

	t.Run("other labels get a global identity", func(t *testing.T) {
		done(c.UpsertMetadata(pfx("10.9.9.9/32"), source.LocalAPI, "api/x", ipcache.Metadata{Labels: lbls("k8s:app=web")}))
		if e, _ := c.Lookup(pfx("10.9.9.9/32")); e.Identity != 1000 {
			t.Errorf("identity = %d, want the fake allocator's first global 1000", e.Identity)
		}
	})

	t.Run("world alone on a /0 is the world of its family", func(t *testing.T) {
		done(c.UpsertMetadata(pfx("0.0.0.0/0"), source.Generated, "policy/a", ipcache.Metadata{Labels: lbls("reserved:world")}))
		done(c.UpsertMetadata(pfx("::/0"), source.Generated, "policy/a", ipcache.Metadata{Labels: lbls("reserved:world")}))
		if got := entryOf(c, "0.0.0.0/0"); got != "9/generated" {
			t.Errorf("0.0.0.0/0 = %s, want 9 (world-ipv4)", got)
		}
		if got := entryOf(c, "::/0"); got != "10/generated" {
			t.Errorf("::/0 = %s, want 10 (world-ipv6)", got)
		}
	})
}

func TestMetadataMergesByPrecedence(t *testing.T) {
	c, _, _ := startCache(t)
	done := ipcachetest.Applied(t, c)
	low, high := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	done(c.UpsertMetadata(pfx("10.3.0.1/32"), source.KVStore, "a", ipcache.Metadata{
		Identity: 300, TunnelPeer: low, EncryptKey: 3, K8sNamespace: "ns", K8sPodName: "pod",
	}))
	done(c.UpsertMetadata(pfx("10.3.0.1/32"), source.Local, "b", ipcache.Metadata{TunnelPeer: high}))
	e, _ := c.Lookup(pfx("10.3.0.1/32"))
	if e.Identity != 300 || e.Source != source.Local || e.TunnelPeer != high || e.EncryptKey != 3 || e.K8sPodName != "pod" {
		t.Errorf("entry = %+v; want identity and key from kvstore, source and tunnel peer from local", e)
	}
}

func TestLookupByIPIsLongestPrefixMatch(t *testing.T) {
	c, _, _ := startCache(t)
	done := ipcachetest.Applied(t, c)
	for _, u := range []struct {
		p  string
		id identity.NumericIdentity
	}{{"0.0.0.0/0", 2}, {"10.0.0.0/8", 300}, {"10.1.0.0/16", 301}, {"10.1.2.3/32", 302}, {"f00d::/16", 303}} {
		done(c.UpsertMetadata(pfx(u.p), source.Generated, "r", ipcache.Metadata{Identity: u.id}))
	}
	tests := []struct {
		give string
		want string
	}{
		{"10.1.2.3", "10.1.2.3/32"},
		{"10.1.2.4", "10.1.0.0/16"},
		{"10.200.0.1", "10.0.0.0/8"},
		{"192.168.0.1", "0.0.0.0/0"},
		{"::ffff:10.1.2.3", "10.1.2.3/32"},
		{"f00d::1", "f00d::/16"},
		{"2001:db8::1", "none"},
	}
	for _, tc := range tests {
		e, ok := c.LookupByIP(netip.MustParseAddr(tc.give))
		got := "none"
		if ok {
			got = e.Prefix.String()
		}
		if got != tc.want {
			t.Errorf("LookupByIP(%s) = %s, want %s", tc.give, got, tc.want)
		}
	}
}

func TestBadUpdatesAreRefusedWhole(t *testing.T) {
	c, _, rec := startCache(t)
	_, err := c.Apply(
		ipcache.Update{Prefix: pfx("10.0.0.1/32"), Source: source.Local, Resource: "ok", Metadata: ipcache.Metadata{Identity: 300}},
		ipcache.Update{Prefix: netip.Prefix{}, Source: source.Local, Resource: "bad-prefix"},
		ipcache.Update{Prefix: pfx("10.0.0.2/32"), Source: "etcd", Resource: "bad-source"},
		ipcache.Update{Prefix: pfx("10.0.0.3/32"), Source: source.Local},
	)
	for _, want := range []string{"update 1 (bad-prefix from local): prefix", `update 2 (bad-source from etcd): source: unknown source "etcd"`, "update 3 ( from local): resource: empty"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Apply error = %v, want it to contain %q", err, want)
		}
	}
	rev, err := c.UpsertMetadata(pfx("10.0.0.9/32"), source.Local, "later", ipcache.Metadata{Identity: 301})
	ipcachetest.Applied(t, c)(rev, err)
	if got := joinLines(rec.take()); got != "10.0.0.9/32: none -> 301/local" {
		t.Errorf("changes = %q; the refused batch must not have applied 10.0.0.1", got)
	}
	if _, err := c.UpsertLocalEndpoint(ipcache.LocalEndpoint{IP: netip.MustParseAddr("10.0.0.5")}); err == nil ||
		!strings.Contains(err.Error(), "field Identity") {
		t.Errorf("endpoint without identity: %v", err)
	}
}

func TestPrefixesAreNormalised(t *testing.T) {
	c, _, _ := startCache(t)
	ipcachetest.Applied(t, c)(c.UpsertMetadata(netip.MustParsePrefix("10.1.2.3/24"), source.Local, "r", ipcache.Metadata{Identity: 300}))
	ipcachetest.Applied(t, c)(c.UpsertMetadata(netip.MustParsePrefix("::ffff:10.9.0.0/112"), source.Local, "r", ipcache.Metadata{Identity: 301}))
	var got []string
	for _, e := range c.Entries() {
		got = append(got, e.Prefix.String())
	}
	if strings.Join(got, " ") != "10.1.2.0/24 10.9.0.0/16" {
		t.Errorf("entries = %v", got)
	}
}

// startCacheWith starts the cell with a given listener.
func startCacheWith(t *testing.T, l ipcache.Listener) ipcache.IPCache {
	t.Helper()
	c, _ := startCacheWithAlloc(t, l)
	return c
}

func TestOneApplyIsOneBatchInOrder(t *testing.T) {
	c, _, rec := startCache(t)
	var updates []ipcache.Update
	for _, p := range []string{"10.4.0.3/32", "10.4.0.1/32", "10.4.0.2/32"} {
		updates = append(updates, ipcache.Update{Prefix: pfx(p), Source: source.KVStore, Resource: "r", Metadata: ipcache.Metadata{Identity: 300}})
	}
	rev, err := c.Apply(updates...)
	ipcachetest.Applied(t, c)(rev, err)
	rec.mu.Lock()
	batches, revs := rec.batches, slices.Clone(rec.revs)
	rec.mu.Unlock()
	want := "10.4.0.3/32: none -> 300/kvstore|10.4.0.1/32: none -> 300/kvstore|10.4.0.2/32: none -> 300/kvstore"
	if got := strings.Join(rec.take(), "|"); got != want || batches != 1 || revs[0] != rev {
		t.Errorf("%d batches (revisions %v) with %s; want one batch at revision %d with %s", batches, revs, got, rev, want)
	}
}
