package loader_test

import (
	"testing"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// egressCIDRMapState resolves, with the real policy engine, one egress
// rule toCIDR: [prefix] of the endpoint db, over the reserved identities.
func egressCIDRMapState(t *testing.T, prefix string) policy.MapState {
	db := pod(t, epIdentity, "app=db")
	cache := selectorcache.New()
	var changes []identity.Change
	for _, id := range append(identity.ReservedIdentities(), db) {
		changes = append(changes, identity.Change{Kind: identity.Added, Identity: id})
	}
	cache.OnIdentitiesChanged(changes)
	repo := policy.NewRepository(cache)
	doc := "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata:\n  name: out\nspec:\n" +
		"  endpointSelector:\n    matchLabels:\n      app: db\n" +
		"  egress:\n  - toCIDR: [\"" + prefix + "\"]\n"
	pols, err := policyapi.ParseDocuments("out.yaml", []byte(doc), policyapi.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols {
		repo.Add(p.Rules...)
	}
	ep := repo.Resolve(db).DistillPolicy(nil)
	t.Cleanup(ep.Detach)
	return ep.ConsumeMapState()
}

// TestEgressWorldPerFamily checks that a /0 rule opens the world of its
// own family only: the programs give an ipcache miss world-ipv4 or
// world-ipv6, and the engine's /0 selectors select exactly that identity,
// so "::/0" never lets IPv4 traffic out nor "0.0.0.0/0" IPv6 traffic.
func TestEgressWorldPerFamily(t *testing.T) {
	v4 := tcp("10.0.0.7", "8.8.8.8", 40000, 53)
	v6 := tcp("fd00::7", "2001:4860:4860::8888", 40000, 53)
	for _, tc := range []struct {
		name   string
		give   string
		wantV4 bool
		wantV6 bool
	}{
		{name: "::/0 opens IPv6 only", give: "::/0", wantV6: true},
		{name: "0.0.0.0/0 opens IPv4 only", give: "0.0.0.0/0", wantV4: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			ms := egressCIDRMapState(t, tc.give)
			progs := h.endpoint(t, ms, true)
			match := map[bool]eventsmap.MatchType{true: eventsmap.MatchL3Only, false: eventsmap.MatchNone}
			reason := map[bool]eventsmap.Reason{true: fwd, false: noPolicy}
			steps := []struct {
				s    step
				peer identity.NumericIdentity
			}{
				{egressStep(v4, identity.ReservedWorldIPv4, tc.wantV4, match[tc.wantV4], reason[tc.wantV4]), identity.ReservedWorldIPv4},
				{egressStep(v6, identity.ReservedWorldIPv6, tc.wantV6, match[tc.wantV6], reason[tc.wantV6]), identity.ReservedWorldIPv6},
			}
			h.drain(t)
			for i, st := range steps {
				ret := run(t, progs.FromContainer, st.s.pkt)
				if want := map[bool]uint32{true: actOK, false: actShot}[st.s.pass]; ret != want {
					t.Errorf("step %d (%v -> %v): verdict %d, want %d (map state %v)", i, st.s.pkt.Src, st.s.pkt.Dst, ret, want, ms)
				}
				checkEvents(t, i, h.drain(t), st.s.events)
				if engine := policy.Verdict(ms, st.peer, policy.Egress, policy.ProtoTCP, st.s.pkt.Dport); engine != st.s.pass {
					t.Errorf("step %d: engine verdict %v for identity %d, datapath test expects %v", i, engine, st.peer, st.s.pass)
				}
			}
		})
	}
}
