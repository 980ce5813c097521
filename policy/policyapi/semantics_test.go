package policyapi_test

import (
	"os"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// allows reports whether entries let traffic with peer through on port:
// what the engine computes for one rule, without named ports.
func allows(entries []policyapi.PeerRule, peer labels.Labels, port uint16, proto policyapi.Protocol) bool {
	return slices.ContainsFunc(entries, func(e policyapi.PeerRule) bool {
		if !slices.ContainsFunc(e.Peers, func(p policyapi.Peer) bool { return p.Matches(peer) }) {
			return false
		}
		return e.IsL3Only() || slices.ContainsFunc(e.Ports, func(pp policyapi.PortProtocol) bool { return pp.Covers(port, proto) })
	})
}

func readPolicies(t *testing.T, file string, o policyapi.Options) []*policyapi.Policy {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ps, err := policyapi.ParseDocuments(file, data, o)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestSeedL4Policy checks the seed's story: only app=employee pods reach
// app=protected-db, on 6379/TCP; with the default local-cluster
// selectors, employees of this cluster only.
func TestSeedL4Policy(t *testing.T) {
	db := pod(t, "cluster1", "default", "app=protected-db")
	for _, tc := range []struct {
		name  string
		local bool
		peer  labels.Labels
		port  uint16
		proto policyapi.Protocol
		want  bool
	}{
		{"local employee", true, pod(t, "cluster1", "default", "app=employee"), 6379, policyapi.ProtoTCP, true},
		{"local employee, other port", true, pod(t, "cluster1", "default", "app=employee"), 6380, policyapi.ProtoTCP, false},
		{"local employee, UDP", true, pod(t, "cluster1", "default", "app=employee"), 6379, policyapi.ProtoUDP, false},
		{"local visitor", true, pod(t, "cluster1", "default", "app=visitor"), 6379, policyapi.ProtoTCP, false},
		{"employee of another namespace", true, pod(t, "cluster1", "hr", "app=employee"), 6379, policyapi.ProtoTCP, false},
		{"employee of cluster2, local default", true, pod(t, "cluster2", "default", "app=employee"), 6379, policyapi.ProtoTCP, false},
		{"employee of cluster2, any cluster", false, pod(t, "cluster2", "default", "app=employee"), 6379, policyapi.ProtoTCP, true},
		{"visitor of cluster2, any cluster", false, pod(t, "cluster2", "default", "app=visitor"), 6379, policyapi.ProtoTCP, false},
		{"the world", true, reserved(identity.ReservedWorld), 6379, policyapi.ProtoTCP, false},
		{"the host", true, reserved(identity.ReservedHost), 6379, policyapi.ProtoTCP, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := policyapi.Options{ClusterName: "cluster1", DefaultLocalCluster: tc.local}
			r := readPolicies(t, "testdata/l4-policy.yaml", o)[0].Rules[0]
			if !r.Subject.Selects(db) || !r.DefaultDeny.Ingress || r.DefaultDeny.Egress {
				t.Fatalf("rule %s does not isolate %s for ingress only", r.Subject.Selector, db)
			}
			if got := allows(r.Ingress, tc.peer, tc.port, tc.proto); got != tc.want {
				t.Errorf("allows %s on %d/%s = %v, want %v", tc.peer, tc.port, tc.proto, got, tc.want)
			}
		})
	}
	r := readPolicies(t, "testdata/l4-policy.yaml", opts)[0].Rules[0]
	for _, other := range []labels.Labels{
		pod(t, "cluster1", "default", "app=employee"),
		pod(t, "cluster1", "other", "app=protected-db"),
		reserved(identity.ReservedHost),
	} {
		if r.Subject.Selects(other) {
			t.Errorf("the policy applies to %s", other)
		}
	}
}

// TestClusterMeshSelectors checks the cross-cluster forms: a named
// cluster, a list of clusters, every cluster.
func TestClusterMeshSelectors(t *testing.T) {
	employee := func(cluster string) labels.Labels { return pod(t, cluster, "finance", "app=employee") }
	for _, local := range []bool{true, false} {
		ps := readPolicies(t, "testdata/clustermesh.yaml", policyapi.Options{ClusterName: "cluster1", DefaultLocalCluster: local})
		for _, tc := range []struct {
			policy string
			want   map[string]bool
		}{
			{"db-from-employees-in-cluster2", map[string]bool{"cluster1": false, "cluster2": true, "cluster3": false}},
			{"db-from-employees-in-two-clusters", map[string]bool{"cluster1": true, "cluster2": true, "cluster3": false}},
			{"db-from-employees-anywhere", map[string]bool{"cluster1": true, "cluster2": true, "cluster3": true}},
		} {
			i := slices.IndexFunc(ps, func(p *policyapi.Policy) bool { return p.Name == tc.policy })
			if i < 0 {
				t.Fatalf("no policy %s", tc.policy)
			}
			for cluster, want := range tc.want {
				if got := allows(ps[i].Rules[0].Ingress, employee(cluster), 6379, policyapi.ProtoTCP); got != want {
					t.Errorf("local default %v: %s allows an employee of %s = %v, want %v", local, tc.policy, cluster, got, want)
				}
			}
		}
	}
}

// TestNetworkPolicyPeerSemantics checks one peer with namespaceSelector
// and podSelector against two peers, on real identities.
func TestNetworkPolicyPeerSemantics(t *testing.T) {
	one := parseOne(t, opts, knp("podSelector: {}\ningress:\n- from:\n  - namespaceSelector: {matchLabels: {team: a}}\n    podSelector: {matchLabels: {app: web}}"))
	two := parseOne(t, opts, knp("podSelector: {}\ningress:\n- from:\n  - namespaceSelector: {matchLabels: {team: a}}\n  - podSelector: {matchLabels: {app: web}}"))
	inTeamA := func(ls labels.Labels) labels.Labels {
		return ls.With(labels.New(labels.SourceK8s, labels.PrefixNamespaceLabels+".team", "a"))
	}
	for _, tc := range []struct {
		name     string
		give     labels.Labels
		one, two bool
	}{
		{"web in a team-a namespace", inTeamA(pod(t, "cluster1", "front", "app=web")), true, true},
		{"other app in a team-a namespace", inTeamA(pod(t, "cluster1", "front", "app=batch")), false, true},
		{"web in the policy namespace", pod(t, "cluster1", "shop", "app=web"), false, true},
		{"web in another namespace", pod(t, "cluster1", "other", "app=web"), false, false},
		{"web in a team-a namespace of cluster2", inTeamA(pod(t, "cluster2", "front", "app=web")), false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := allows(one.Rules[0].Ingress, tc.give, 80, policyapi.ProtoTCP); got != tc.one {
				t.Errorf("one peer allows %s = %v, want %v", tc.give, got, tc.one)
			}
			if got := allows(two.Rules[0].Ingress, tc.give, 80, policyapi.ProtoTCP); got != tc.two {
				t.Errorf("two peers allow %s = %v, want %v", tc.give, got, tc.two)
			}
		})
	}
}

// TestEmptyVersusAbsentPeers checks the cases users trip on: a missing
// from is everyone, an empty Cilium entry is no one.
func TestEmptyVersusAbsentPeers(t *testing.T) {
	world := reserved(identity.ReservedWorld)
	remote := pod(t, "cluster2", "x", "app=a")
	for _, tc := range []struct {
		name string
		give string
		want bool
	}{
		{"NetworkPolicy rule without from admits the world", knp("ingress:\n- {}"), true},
		{"NetworkPolicy with no rules admits nothing", knp("ingress: []"), false},
		{"Cilium rule - {} admits nothing", cnp("endpointSelector: {}\ningress:\n- {}"), false},
		{"Cilium rule with ports only admits the world on them", cnp("endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"80\"}]}]"), true},
		{"Cilium fromEntities all admits the world", cnp("endpointSelector: {}\ningress:\n- fromEntities: [all]"), true},
		{"Cilium empty fromEndpoints selector is the namespace only", cnp("endpointSelector: {}\ningress:\n- fromEndpoints: [{}]"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := parseOne(t, opts, tc.give).Rules[0]
			if !r.DefaultDeny.Ingress {
				t.Error("ingress is not isolated")
			}
			if got := allows(r.Ingress, world, 80, policyapi.ProtoTCP); got != tc.want {
				t.Errorf("admits the world = %v, want %v", got, tc.want)
			}
			if got := allows(r.Ingress, remote, 80, policyapi.ProtoTCP); got != tc.want {
				t.Errorf("admits a pod of cluster2 = %v, want %v", got, tc.want)
			}
		})
	}
}
