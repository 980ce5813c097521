package scenariogen_test

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
	"github.com/apiary-net/apiary/policy/simulate/scenariogen"
)

// all turns every option on, as the datapath property test does.
var all = scenariogen.Options{Queries: 30, Families: true, AddressQueries: true, SelfQueries: true, ICMP: true, Divergent: true}

// TestGeneratedScenariosLoad checks that the generator writes scenarios
// the simulator accepts, that a seed always gives the same file, and
// that the features the property tests rely on show up.
func TestGeneratedScenariosLoad(t *testing.T) {
	common := []string{"ingressDeny", "egressDeny", "endPort", "except", "2001:db8", "SCTP", "UDP",
		"enableDefaultDeny", "kind: NetworkPolicy", "kind: CiliumNetworkPolicy", "kind: CiliumClusterwideNetworkPolicy",
		"specs:", "cluster2/", "matchExpressions", "operator: NotIn", "toEntities", "remote-node", "fromCIDRSet",
		"toCIDR:", "ipBlock", "policyTypes", "namespaceSelector", "io.cilium.k8s.policy.cluster", "port: DNS",
		"port: diameter", "protocol: ANY", "policyDefaultLocalCluster: false"}
	tests := []struct {
		name string
		give scenariogen.Options
		want []string
	}{
		{"common", scenariogen.Options{Queries: 30}, common},
		{"all", all, append(common, "icmps", "protocol: ICMP\n", "protocol: ICMPv6", "family: IPv6", "- fd00:0::")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			features := map[string]int{}
			for seed := range uint64(100) {
				c := scenariogen.New(seed, tt.give)
				data := c.File()
				if again := scenariogen.New(seed, tt.give).File(); !bytes.Equal(data, again) {
					t.Fatalf("seed %d: two different files", seed)
				}
				sim, err := simulate.Load("gen.yaml", data)
				if err != nil {
					t.Fatalf("seed %d: %v\n%s", seed, err, data)
				}
				if n := len(sim.Run()); n != tt.give.Queries {
					t.Fatalf("seed %d: %d results", seed, n)
				}
				for _, f := range tt.want {
					if strings.Contains(string(data), f) {
						features[f]++
					}
				}
			}
			for _, f := range tt.want {
				if n := features[f]; n < 3 {
					t.Errorf("%q appears in %d of 100 scenarios", f, n)
				}
			}
		})
	}
}

// TestOptionsLeaveOut checks that without the options a scenario has
// none of what they add: callers comparing with Cilium rely on it.
func TestOptionsLeaveOut(t *testing.T) {
	for seed := range uint64(200) {
		c := scenariogen.New(seed, scenariogen.Options{Queries: 50})
		data := string(c.File())
		for _, f := range []string{"icmps", "ICMP", "type:"} {
			if strings.Contains(data, f) {
				t.Fatalf("seed %d: %q without Options.ICMP\n%s", seed, f, data)
			}
		}
		for _, ep := range c.Scenario.Endpoints {
			if len(ep.IPs) != 1 || !netip.MustParseAddr(ep.IPs[0]).Is4() {
				t.Fatalf("seed %d: pod %s has addresses %v without Options.Families", seed, ep.Name, ep.IPs)
			}
		}
		pods := map[string]bool{}
		for _, ep := range c.Scenario.Endpoints {
			for _, ip := range ep.IPs {
				pods[ip] = true
			}
		}
		for _, q := range c.Scenario.Queries {
			if q.From == q.To {
				t.Fatalf("seed %d: query %s -> %s without Options.SelfQueries", seed, q.From, q.To)
			}
			if pods[q.From] || pods[q.To] {
				t.Fatalf("seed %d: query %s -> %s names a pod by address without Options.AddressQueries", seed, q.From, q.To)
			}
		}
	}
}

// TestDivergent checks that enableDefaultDeny is true in a direction
// without entries, and that icmps name ICMP type 0, only with
// Options.Divergent.
func TestDivergent(t *testing.T) {
	count := func(opts scenariogen.Options) (defaultDeny, typeZero int) {
		for seed := range uint64(300) {
			for _, p := range scenariogen.New(seed, opts).Policies {
				defaultDeny += defaultDenyWithoutEntries(t, p)
				typeZero += icmpTypeZero(t, p)
			}
		}
		return defaultDeny, typeZero
	}
	if dd, zero := count(scenariogen.Options{ICMP: true}); dd != 0 || zero != 0 {
		t.Errorf("without Options.Divergent: %d rules deny by default without entries, %d icmps fields of ICMP type 0", dd, zero)
	}
	if dd, zero := count(scenariogen.Options{ICMP: true, Divergent: true}); dd == 0 || zero == 0 {
		t.Errorf("with Options.Divergent: %d rules deny by default without entries, %d icmps fields of ICMP type 0", dd, zero)
	}
}
