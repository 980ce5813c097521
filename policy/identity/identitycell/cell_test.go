package identitycell_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestTwoAgentsAllocateSameIdentity: two agents (distinct node IPs, one
// real etcd) allocating the same label sets at the same time get the
// same identities, each referenced by both nodes.
func TestTwoAgentsAllocateSameIdentity(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	agents := []*agent{
		startAgent(t, agentConfig{srv: srv, ip: "192.168.1.11"}),
		startAgent(t, agentConfig{srv: srv, ip: "192.168.1.12"}),
	}
	const sets = 10
	got := make([][sets]*identity.Identity, 2)
	var wg sync.WaitGroup
	for n, a := range agents {
		for i := range sets {
			wg.Go(func() {
				id, _, err := a.alloc.AllocateIdentity(ctxFor(t), pod(fmt.Sprintf("app-%d", i)))
				if err != nil {
					t.Error(err)
					return
				}
				got[n][i] = id
			})
		}
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i := range sets {
		a, b := got[0][i], got[1][i]
		if a.ID != b.ID || a.ID.Scope() != identity.ScopeGlobal || a.ID < 256 || a.ID > 65535 {
			t.Errorf("app-%d: agent 1 got %d, agent 2 got %d", i, a.ID, b.ID)
			continue
		}
		for _, ip := range []string{"192.168.1.11", "192.168.1.12"} {
			master, ref := identitycache.KVStoreEntries(a.ID, a.Labels, ip)
			if get(t, srv, master.Key) != master.Value || get(t, srv, ref.Key) != ref.Value {
				t.Errorf("app-%d: kvstore lacks %s or %s", i, master.Key, ref.Key)
			}
		}
	}
	// Each agent learns the identities through the watch as well.
	celltest.Eventually(t, "both caches to hold every identity", func() bool {
		for _, a := range agents {
			for i := range sets {
				if a.alloc.LookupIdentityByID(got[0][i].ID) == nil {
					return false
				}
			}
		}
		return true
	})
}

// TestRestartKeepsIdentities: an agent that restarts gets the same ids
// for the same labels, whether its old references are still there or
// expired while it was down.
func TestRestartKeepsIdentities(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	first := newAgent(t, agentConfig{srv: srv, ip: "10.0.0.7"})
	must(t, first.hive.Start(context.Background()))
	web, _, err := first.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	db, _, err := first.alloc.AllocateIdentity(ctxFor(t), pod("db"))
	must(t, err)
	must(t, first.hive.Stop(context.Background()))
	// db's reference expired while the agent was down.
	_, ref := identitycache.KVStoreEntries(db.ID, db.Labels, "10.0.0.7")
	if _, err := srv.Client().Delete(ctxFor(t), ref.Key); err != nil {
		t.Fatal(err)
	}

	again := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.7"})
	for _, want := range []*identity.Identity{web, db} {
		got, isNew, err := again.alloc.AllocateIdentity(ctxFor(t), want.Labels)
		if err != nil || got.ID != want.ID || isNew {
			t.Errorf("%s after restart = %v (new %v, %v), want %d", want.Labels, got, isNew, err, want.ID)
		}
	}
	if get(t, srv, ref.Key) != db.ID.String() {
		t.Error("the expired reference was not written again")
	}
}

// TestGCRemovesUnreferencedIdentitiesOnly: the GC job of one agent
// deletes the master of an identity nobody uses any more, and only that.
func TestGCRemovesUnreferencedIdentitiesOnly(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a1 := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.1", flags: []string{"identity-gc-interval=100ms"}})
	a2 := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.2", flags: []string{"identity-gc-interval=0"}})
	ctx := ctxFor(t)
	kept, _, err := a1.alloc.AllocateIdentity(ctx, pod("kept"))
	must(t, err)
	remote, _, err := a2.alloc.AllocateIdentity(ctx, pod("remote"))
	must(t, err)
	gone, _, err := a1.alloc.AllocateIdentity(ctx, pod("gone"))
	must(t, err)
	if released, err := a1.alloc.Release(ctx, gone); err != nil || !released {
		t.Fatalf("Release = %v, %v", released, err)
	}
	master := func(id *identity.Identity) string {
		m, _ := identitycache.KVStoreEntries(id.ID, id.Labels, "")
		return get(t, srv, m.Key)
	}
	celltest.Eventually(t, "the GC to delete the unreferenced master", func() bool { return master(gone) == "" })
	celltest.Eventually(t, "both caches to drop the collected identity", func() bool {
		return a1.alloc.LookupIdentityByID(gone.ID) == nil && a2.alloc.LookupIdentityByID(gone.ID) == nil
	})
	if master(kept) == "" || master(remote) == "" {
		t.Error("the GC deleted a referenced master")
	}
	if slices.Contains(a2.observer.events(), fmt.Sprintf("-%d", kept.ID)) {
		t.Error("observers were told a referenced identity went away")
	}
}

// TestObservers: observers hear of the reserved identities first, then
// of every identity that appears or goes away, once, in order.
func TestObservers(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a1 := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.1"})
	a2 := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.2"})
	reserved := []string{"+1", "+2", "+3", "+4", "+5", "+6", "+7", "+8", "+9", "+10"}
	if got := a1.observer.events(); !slices.Equal(got, reserved) {
		t.Fatalf("first events = %v, want the reserved identities", got)
	}
	ctx := ctxFor(t)
	web, _, err := a1.alloc.AllocateIdentity(ctx, pod("web"))
	must(t, err)
	// Known to the observers when AllocateIdentity returns.
	if got := a1.observer.events(); !slices.Equal(got, append(reserved, fmt.Sprintf("+%d", web.ID))) {
		t.Errorf("events after allocation = %v", got)
	}
	cidr, _, err := a1.alloc.AllocateIdentity(ctx, identity.CIDRLabels(mustPrefix("10.1.0.0/16")))
	must(t, err)
	_, err = a1.alloc.Release(ctx, cidr)
	must(t, err)
	db, _, err := a2.alloc.AllocateIdentity(ctx, pod("db"))
	must(t, err)
	want := append(slices.Clone(reserved), fmt.Sprintf("+%d", web.ID), fmt.Sprintf("+%d", cidr.ID),
		fmt.Sprintf("-%d", cidr.ID), fmt.Sprintf("+%d", db.ID))
	celltest.Eventually(t, "agent 1 to hear of agent 2's identity", func() bool { return len(a1.observer.events()) >= len(want) })
	if got := a1.observer.events(); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v (the watch must not repeat an identity already announced)", got, want)
	}
}

func TestLocalCIDRIdentities(t *testing.T) {
	a := startAgent(t, agentConfig{})
	ctx := ctxFor(t)
	lbls := identity.CIDRLabels(mustPrefix("10.0.0.0/24"))
	id, isNew, err := a.alloc.AllocateIdentity(ctx, lbls)
	must(t, err)
	if !isNew || id.ID.Scope() != identity.ScopeLocal || id.ID.ScopeName() != "local" || !id.Labels.Equal(lbls) {
		t.Fatalf("CIDR identity = %d %s (new %v), want a new local identity", id.ID, id.Labels, isNew)
	}
	if !id.Labels.Has(labels.New(labels.SourceCIDR, "10.0.0.0/8", "")) || !id.Labels.Has(labels.New(labels.SourceReserved, "world", "")) {
		t.Errorf("labels %s lack a covering prefix or reserved:world", id.Labels)
	}
	again, isNew, err := a.alloc.AllocateIdentity(ctx, lbls)
	if err != nil || again.ID != id.ID || isNew {
		t.Errorf("second allocation = %v %v %v", again, isNew, err)
	}
	other, _, err := a.alloc.AllocateIdentity(ctx, identity.CIDRLabels(mustPrefix("2001:db8::/32")))
	must(t, err)
	if other.ID == id.ID || other.ID.Scope() != identity.ScopeLocal {
		t.Errorf("IPv6 CIDR identity = %d", other.ID)
	}
	if released, err := a.alloc.Release(ctx, id); err != nil || released {
		t.Errorf("first release = %v, %v; want still referenced", released, err)
	}
	if a.alloc.LookupIdentity(lbls) == nil {
		t.Error("identity gone while referenced")
	}
	if released, err := a.alloc.Release(ctx, id); err != nil || !released {
		t.Errorf("last release = %v, %v", released, err)
	}
	if a.alloc.LookupIdentity(lbls) != nil || a.alloc.LookupIdentityByID(id.ID) != nil {
		t.Error("identity still known after its last release")
	}
	if _, err := a.alloc.Release(ctx, id); !errors.Is(err, identitycache.ErrNotAllocated) {
		t.Errorf("release of a released identity = %v, want ErrNotAllocated", err)
	}
}

func TestLabelsOfEndpointIdentities(t *testing.T) {
	a := startAgent(t, agentConfig{flags: []string{"cluster-name=prod", "cluster-id=3"}})
	ctx := ctxFor(t)
	id, _, err := a.alloc.AllocateIdentity(ctx, pod("web"))
	must(t, err)
	if l, ok := id.Labels.Get(labels.KeyPolicyCluster); !ok || l.String() != "k8s:io.cilium.k8s.policy.cluster=prod" {
		t.Errorf("labels %s lack k8s:io.cilium.k8s.policy.cluster=prod", id.Labels)
	}
	if id.ID < 3<<16+256 || id.ID > 4<<16-1 {
		t.Errorf("id %d outside cluster 3's range", id.ID)
	}
	if got := a.alloc.LookupIdentity(pod("web")); got == nil || got.ID != id.ID {
		t.Errorf("LookupIdentity without the cluster label = %v, want %d", got, id.ID)
	}
	foreign := pod("web").With(labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "staging"))
	if _, _, err := a.alloc.AllocateIdentity(ctx, foreign); !errors.Is(err, identitycache.ErrInvalidLabels) {
		t.Errorf("labels of another cluster = %v, want ErrInvalidLabels", err)
	}
	if _, _, err := a.alloc.AllocateIdentity(ctx, nil); !errors.Is(err, identitycache.ErrInvalidLabels) {
		t.Errorf("no labels = %v, want ErrInvalidLabels", err)
	}
	for _, tc := range []struct {
		give labels.Labels
		want identity.NumericIdentity
	}{
		{labels.MustParseList("reserved:host", "k8s:node-role=worker"), identity.ReservedHost},
		{labels.MustParseList("reserved:world"), identity.ReservedWorld},
		{labels.MustParseList("reserved:health"), identity.ReservedHealth},
	} {
		got, isNew, err := a.alloc.AllocateIdentity(ctx, tc.give)
		if err != nil || got.ID != tc.want || isNew {
			t.Errorf("%s = %v (new %v, %v), want reserved %d", tc.give, got, isNew, err, tc.want)
		}
	}
}

func TestStandalone(t *testing.T) {
	a := startAgent(t, agentConfig{})
	web, isNew, err := a.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	if !isNew || web.ID < 256 || web.ID > 65535 {
		t.Errorf("standalone allocation = %d (new %v), want a new id in 256..65535", web.ID, isNew)
	}
	// The first probe may predate the allocation; the next one counts it.
	line := statusLine(t, a.client, func(e models.StatusEntry) bool { return strings.HasPrefix(e.Message, "1 global") })
	if line.State != status.Ok || line.Message != "1 global, 0 local, standalone (local-only allocator)" {
		t.Errorf("Identities line = %s %q", line.State, line.Message)
	}
	if released, err := a.alloc.Release(ctxFor(t), web); err != nil || !released || a.alloc.LookupIdentityByID(web.ID) != nil {
		t.Errorf("standalone release = %v, %v", released, err)
	}
}

func TestConfigValidation(t *testing.T) {
	var a identity.Allocator
	_, err := celltest.Populate(t, []string{"identity-gc-interval=-1s"}, kvstorecell.Cell, localnode.Cell, identitycell.Cell, celltest.Capture(&a))
	if err == nil || !strings.Contains(err.Error(), "--identity-gc-interval: -1s is negative") {
		t.Errorf("Populate = %v", err)
	}
}

func TestLabelsFlag(t *testing.T) {
	var f *labels.Filter
	celltest.New(t, []string{"labels=k8s:team,!k8s:team.internal", "node-name=node-a"},
		kvstorecell.Cell, localnode.Cell, identitycell.Cell, celltest.Capture(&f))
	id, _ := f.Filter(labels.MustParseList("k8s:team=a", "k8s:team.internal=x", "k8s:tier=db"))
	if got := labels.Labels(id).String(); got != "k8s:team=a" {
		t.Errorf("identity labels = %s, want only k8s:team=a", got)
	}
	_, err := celltest.Populate(t, []string{"labels=k8s:([", "node-name=node-a"},
		kvstorecell.Cell, localnode.Cell, identitycell.Cell, celltest.Capture(&f))
	if err == nil || !strings.Contains(err.Error(), "--labels") {
		t.Errorf("bad --labels: %v, want an error naming the flag", err)
	}
}
