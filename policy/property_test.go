package policy_test

import (
	"fmt"
	"math/rand"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// The property: after any sequence of rule, identity and peer named-port
// changes, the map state maintained incrementally (and the sum of the
// deltas handed out) equals the map state computed from scratch, and its
// verdicts agree with the oracle's.

var (
	propApps     = []string{"a0", "a1", "a2", "a3"}
	propPrefixes = []string{"10.0.0.0/8", "10.1.0.0/16", "10.1.2.0/24", "10.2.0.0/16", "192.0.2.0/24", "0.0.0.0/0"}
	propNamed    = []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: policyapi.ProtoTCP}, {Name: "dns", Port: 53, Protocol: policyapi.ProtoUDP}}
	propEndpoint = pod(999, "app=a0")
	// propPeerPorts are the port sets a peer endpoint may declare: one
	// name with different numbers on endpoints of one identity, names
	// on some endpoints and not others, the same name on two protocols.
	propPeerPorts = [][]policyapi.NamedPort{
		nil,
		{{Name: "http", Port: 8080, Protocol: policyapi.ProtoTCP}},
		{{Name: "http", Port: 80, Protocol: policyapi.ProtoTCP}},
		{{Name: "http", Port: 8100, Protocol: policyapi.ProtoTCP}, {Name: "dns", Port: 53, Protocol: policyapi.ProtoUDP}},
		{{Name: "dns", Port: 53, Protocol: policyapi.ProtoTCP}, {Name: "http", Port: 8080, Protocol: policyapi.ProtoUDP}},
	}
)

// propPeerSlots is the number of endpoints per peer identity.
const propPeerSlots = 2

// peerSlot is one endpoint of a peer identity.
type peerSlot struct {
	id   identity.NumericIdentity
	slot int
}

func (s peerSlot) key() string { return fmt.Sprintf("%d/%d", s.id, s.slot) }

// propWorld is the random state: identities present, policies in force
// and the named ports of peer endpoints.
type propWorld struct {
	rnd       *rand.Rand
	pool      []*identity.Identity
	present   map[identity.NumericIdentity]*identity.Identity
	policies  map[string][]*policyapi.Rule
	peerPorts map[peerSlot][]policyapi.NamedPort
}

func newPropWorld(seed int64) *propWorld {
	w := &propWorld{
		rnd: rand.New(rand.NewSource(seed)), present: map[identity.NumericIdentity]*identity.Identity{},
		policies: map[string][]*policyapi.Rule{}, peerPorts: map[peerSlot][]policyapi.NamedPort{},
	}
	for i := range 24 {
		w.pool = append(w.pool, pod(identity.NumericIdentity(1000+i), "app="+propApps[i%len(propApps)], fmt.Sprintf("tier=t%d", i%3)))
	}
	for i, p := range propPrefixes {
		w.pool = append(w.pool, cidrIdentity(identity.NumericIdentity(i+1), p))
	}
	return w
}

func (w *propWorld) pick(list []string) string { return list[w.rnd.Intn(len(list))] }

func (w *propWorld) randomPeer() policyapi.Peer {
	switch w.rnd.Intn(5) {
	case 0:
		return policyapi.Peer{Kind: policyapi.PeerAny}
	case 1:
		sels, _ := policyapi.EntityWorld.Selectors("default")
		sel := sels[w.rnd.Intn(len(sels))]
		return policyapi.Peer{Kind: policyapi.PeerEntity, Entity: policyapi.EntityWorld, Selector: &sel}
	case 2:
		c := &policyapi.CIDRRule{Prefix: netip.MustParsePrefix("10.0.0.0/8")}
		if w.rnd.Intn(2) == 0 {
			c.Except = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
		}
		return policyapi.Peer{Kind: policyapi.PeerCIDR, CIDR: c}
	}
	sel := policyapi.SelectLabels(labels.New(labels.SourceK8s, "app", w.pick(propApps)))
	return policyapi.Peer{Kind: policyapi.PeerEndpoints, Selector: &sel}
}

func (w *propWorld) randomPeerRules() []policyapi.PeerRule {
	out := make([]policyapi.PeerRule, w.rnd.Intn(3))
	for i := range out {
		for range 1 + w.rnd.Intn(2) {
			out[i].Peers = append(out[i].Peers, w.randomPeer())
		}
		switch w.rnd.Intn(6) {
		case 0:
			out[i].Ports = []policyapi.PortProtocol{{Port: 80, Protocol: policyapi.ProtoTCP}}
		case 1:
			out[i].Ports = []policyapi.PortProtocol{{Port: 8000, EndPort: 8100, Protocol: policyapi.ProtoAny}}
		case 2:
			out[i].Ports = []policyapi.PortProtocol{{Name: "http", Protocol: policyapi.ProtoTCP}, {Name: "dns", Protocol: policyapi.ProtoAny}}
		case 3:
			out[i].ICMPs = []policyapi.ICMPField{{Family: policyapi.ICMPv4, Type: 8}}
		}
	}
	return out
}

func (w *propWorld) randomRule(name string) *policyapi.Rule {
	return &policyapi.Rule{
		Subject:     policyapi.Subject{Kind: policyapi.SubjectEndpoints, Selector: policyapi.SelectLabels(labels.New(labels.SourceK8s, "app", w.pick(propApps[:2])))},
		Ingress:     w.randomPeerRules(),
		IngressDeny: w.randomPeerRules(),
		Egress:      w.randomPeerRules(),
		EgressDeny:  w.randomPeerRules(),
		DefaultDeny: policyapi.DefaultDeny{Ingress: w.rnd.Intn(3) > 0, Egress: w.rnd.Intn(3) > 0},
		Labels:      origin(name),
	}
}

// fromScratch computes the endpoint's map state with a new cache and
// repository holding the current identities, rules and peer ports.
func (w *propWorld) fromScratch() (policy.MapState, int) {
	var idents []*identity.Identity
	for _, id := range w.present {
		idents = append(idents, id)
	}
	e := newEngine(append(idents, propEndpoint)...)
	for s, ports := range w.peerPorts {
		e.ports.Upsert(s.key(), s.id, ports)
	}
	for _, rules := range w.policies {
		e.repo.Add(rules...)
	}
	return e.endpoint(propEndpoint, propNamed...).MapState(), e.cache.Len()
}

// peerPortsOf returns the union of the ports the endpoints of id
// declare, as the oracle resolves egress port names against them.
func (w *propWorld) peerPortsOf(id identity.NumericIdentity) []policyapi.NamedPort {
	var out []policyapi.NamedPort
	for slot := range propPeerSlots {
		out = append(out, w.peerPorts[peerSlot{id, slot}]...)
	}
	return out
}

// changePeerPorts gives a random endpoint of a random pod identity (known
// or not) a random port set and tells the engine, or sometimes replaces
// the engine's source with a fresh table that has the change, which the
// engine then only learns from the replacement.
func (w *propWorld) changePeerPorts(e *engine) string {
	s := peerSlot{id: identity.NumericIdentity(1000 + w.rnd.Intn(24)), slot: w.rnd.Intn(propPeerSlots)}
	ports := propPeerPorts[w.rnd.Intn(len(propPeerPorts))]
	if ports == nil {
		delete(w.peerPorts, s)
	} else {
		w.peerPorts[s] = ports
	}
	if w.rnd.Intn(6) == 0 {
		fresh := policy.NewPeerPortTable()
		for s, ports := range w.peerPorts {
			fresh.Upsert(s.key(), s.id, ports)
		}
		e.ports = fresh
		e.repo.SetPeerNamedPorts(fresh)
		return fmt.Sprintf("replace the peer port source, where endpoint %s declares %v", s.key(), ports)
	}
	e.setPeerPorts(s.key(), s.id, ports...)
	return fmt.Sprintf("endpoint %s declares %v", s.key(), ports)
}

func TestIncrementalEqualsFromScratch(t *testing.T) {
	seeds, steps := 40, 150
	if testing.Short() {
		seeds = 5
	}
	for seed := range int64(seeds) {
		w := newPropWorld(seed)
		e := newEngine(propEndpoint)
		ep := e.endpoint(propEndpoint, propNamed...)
		shadow := ep.MapState()
		for step := range steps {
			var what string
			switch op := w.rnd.Intn(12); {
			case op >= 10:
				what = w.changePeerPorts(&e)
				shadow.Apply(ep.ConsumeMapChanges())
			case op < 6:
				id := w.pool[w.rnd.Intn(len(w.pool))]
				if _, ok := w.present[id.ID]; ok {
					delete(w.present, id.ID)
					e.cache.OnIdentitiesChanged(deleted(id))
					what = fmt.Sprintf("delete identity %d", id.ID)
				} else {
					w.present[id.ID] = id
					e.cache.OnIdentitiesChanged(added(id))
					what = fmt.Sprintf("add identity %d", id.ID)
				}
				shadow.Apply(ep.ConsumeMapChanges())
			default:
				name := fmt.Sprintf("p%d", w.rnd.Intn(4))
				if op == 9 {
					delete(w.policies, name)
					e.repo.DeleteByLabels(origin(name))
					what = "delete policy " + name
				} else {
					w.policies[name] = []*policyapi.Rule{w.randomRule(name), w.randomRule(name)}
					e.repo.ReplaceByLabels(origin(name), w.policies[name]...)
					what = "replace policy " + name
				}
				ep.Detach()
				ep = e.endpoint(propEndpoint, propNamed...)
				shadow = ep.MapState()
			}
			want, wantSelectors := w.fromScratch()
			if got := ep.MapState(); !got.Equal(want) {
				t.Fatalf("seed %d step %d (%s): incremental map state\n%v\nwant\n%v", seed, step, what, got, want)
			}
			if !shadow.Equal(want) {
				t.Fatalf("seed %d step %d (%s): applied deltas give\n%v\nwant\n%v", seed, step, what, shadow, want)
			}
			if got := e.cache.Len(); got != wantSelectors {
				t.Fatalf("seed %d step %d (%s): %d selectors cached, want %d", seed, step, what, got, wantSelectors)
			}
			w.checkOracle(t, e, want)
		}
	}
}

// checkOracle compares the verdicts of ms for random packets with the
// oracle's.
func (w *propWorld) checkOracle(t *testing.T, e engine, ms policy.MapState) {
	t.Helper()
	peers := identity.ReservedIdentities()
	for _, id := range w.present {
		peers = append(peers, id)
	}
	rules := e.repo.Rules()
	for range 20 {
		p, peerLabels := w.randomPacket(peers)
		want := oracleVerdict(rules, propEndpoint.Labels, propNamed, peerLabels, w.peerPortsOf(p.peer), p)
		if got := policy.Verdict(ms, p.peer, p.dir, p.proto, p.port); got != want {
			t.Fatalf("Verdict(peer %d %v, %s, proto %d, port %d) = %v, oracle says %v", p.peer, peerLabels, p.dir, p.proto, p.port, got, want)
		}
	}
}
