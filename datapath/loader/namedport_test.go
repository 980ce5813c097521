package loader_test

import (
	"testing"

	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// pod returns a pod identity in namespace default with k8s labels kvs.
func pod(t *testing.T, id identity.NumericIdentity, kvs ...string) *identity.Identity {
	ls := []labels.Label{
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "default"),
	}
	for _, kv := range kvs {
		l, err := labels.Parse(kv, labels.SourceK8s)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return &identity.Identity{ID: id, Labels: labels.FromSlice(ls)}
}

// namedPortMapState resolves, with the real policy engine, an egress rule
// on the named port "web" towards two identities whose pods give the name
// different numbers: employee (peer A) 8080, stranger (peer B) 9090.
func namedPortMapState(t *testing.T) policy.MapState {
	db := pod(t, epIdentity, "app=db")
	employee := pod(t, peerAID, "app=employee")
	stranger := pod(t, peerBID, "app=stranger")
	cache := selectorcache.New()
	var changes []identity.Change
	for _, id := range append(identity.ReservedIdentities(), db, employee, stranger) {
		changes = append(changes, identity.Change{Kind: identity.Added, Identity: id})
	}
	cache.OnIdentitiesChanged(changes)
	repo := policy.NewRepository(cache)
	ports := policy.NewPeerPortTable()
	repo.SetPeerNamedPorts(ports)
	repo.PeerNamedPortsChanged(ports.Upsert("employee-0", peerAID, []policyapi.NamedPort{{Name: "web", Port: 8080, Protocol: policyapi.ProtoTCP}})...)
	repo.PeerNamedPortsChanged(ports.Upsert("stranger-0", peerBID, []policyapi.NamedPort{{Name: "web", Port: 9090, Protocol: policyapi.ProtoTCP}})...)
	doc := "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata:\n  name: web\nspec:\n" +
		"  endpointSelector:\n    matchLabels:\n      app: db\n" +
		"  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}, {matchLabels: {app: stranger}}]\n" +
		"    toPorts: [{ports: [{port: web}]}]\n"
	pols, err := policyapi.ParseDocuments("web.yaml", []byte(doc), policyapi.DefaultOptions())
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

func TestEgressNamedPortTwoIdentities(t *testing.T) {
	h := newHarness(t)
	ms := namedPortMapState(t)
	progs := h.endpoint(t, ms, true)
	steps := []step{
		egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 8080), peerAID, true, eventsmap.MatchL3L4, fwd),
		egressStep(tcp("10.0.0.7", "10.0.1.1", 40000, 9090), peerAID, false, eventsmap.MatchNone, noPolicy),
		egressStep(tcp("10.0.0.7", "10.0.1.2", 40000, 9090), peerBID, true, eventsmap.MatchL3L4, fwd),
		egressStep(tcp("10.0.0.7", "10.0.1.2", 40000, 8080), peerBID, false, eventsmap.MatchNone, noPolicy),
		egressStep(tcp("10.0.0.7", "192.0.2.1", 40000, 8080), identity.ReservedWorldIPv4, false, eventsmap.MatchNone, noPolicy),
	}
	for i, s := range steps {
		ret := run(t, progs.FromContainer, s.pkt)
		if want := map[bool]uint32{true: actOK, false: actShot}[s.pass]; ret != want {
			t.Errorf("step %d (%v -> %v:%d): verdict %d, want %d (map state %v)", i, s.pkt.Src, s.pkt.Dst, s.pkt.Dport, ret, want, ms)
		}
		checkEvents(t, i, h.drain(t), s.events)
		// the datapath agrees with the engine's own verdict
		peer := map[string]identity.NumericIdentity{"10.0.1.1": peerAID, "10.0.1.2": peerBID}[s.pkt.Dst.String()]
		if peer == 0 {
			peer = identity.ReservedWorldIPv4
		}
		if engine := policy.Verdict(ms, peer, policy.Egress, policy.ProtoTCP, s.pkt.Dport); engine != s.pass {
			t.Errorf("step %d: engine verdict %v, datapath test expects %v", i, engine, s.pass)
		}
	}
}

// TestMetricsCount checks the per-CPU metrics: forwarded and dropped
// packets by direction, with their bytes.
func TestMetricsCount(t *testing.T) {
	h := newHarness(t)
	progs := h.endpoint(t, policy.MapState{key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16): allow}, true)
	ok := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	bad := tcp("10.0.0.7", "10.0.1.1", 40000, 81)
	for _, p := range []testpkt.Packet{ok, ok, bad, ok.Reply()} {
		run(t, progs.FromContainer, p)
	}
	run(t, progs.ToContainer, ok.Reply())
	got, err := h.metrics.Read()
	if err != nil {
		t.Fatal(err)
	}
	n := uint64(len(ok.MustFrame()))
	want := map[[2]int][2]uint64{
		{int(eventsmap.ReasonForwarded), int(policy.Egress)}:  {2, 2 * n},
		{int(eventsmap.ReasonPolicy), int(policy.Egress)}:     {2, 2 * n}, // bad, and the reply sent as egress: new flow, no policy
		{int(eventsmap.ReasonForwarded), int(policy.Ingress)}: {1, n},
	}
	if len(got) != len(want) {
		t.Fatalf("metrics %+v, want %v", got, want)
	}
	for _, m := range got {
		w, found := want[[2]int{int(m.Reason), int(m.Direction)}]
		if !found || w != [2]uint64{m.Packets, m.Bytes} {
			t.Errorf("metric %+v, want packets/bytes %v", m, w)
		}
	}
}
