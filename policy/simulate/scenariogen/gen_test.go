package scenariogen_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
	"github.com/apiary-net/apiary/policy/simulate/scenariogen"
)

// TestGeneratedScenariosLoad checks that the generator writes scenarios
// the simulator accepts, that a seed always gives the same file, and
// that the features the property tests rely on show up.
func TestGeneratedScenariosLoad(t *testing.T) {
	features := map[string]int{"ingressDeny": 0, "egressDeny": 0, "endPort": 0, "except": 0, "2001:db8": 0,
		"fd00:0::": 0, "SCTP": 0, "UDP": 0, "enableDefaultDeny": 0, "NetworkPolicy": 0, "cluster2/": 0,
		"icmps": 0, "protocol: ICMP\n": 0, "protocol: ICMPv6": 0, "family: IPv6": 0}
	for seed := range uint64(100) {
		data := scenariogen.Generate(seed, 30)
		if again := scenariogen.Generate(seed, 30); !bytes.Equal(data, again) {
			t.Fatalf("seed %d: two different files", seed)
		}
		sim, err := simulate.Load("gen.yaml", data)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, data)
		}
		if n := len(sim.Run()); n != 30 {
			t.Fatalf("seed %d: %d results", seed, n)
		}
		for f := range features {
			if strings.Contains(string(data), f) {
				features[f]++
			}
		}
	}
	for f, n := range features {
		if n < 5 {
			t.Errorf("%q appears in %d of 100 scenarios", f, n)
		}
	}
}
