package simulate_test

import (
	"flag"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
	"github.com/apiary-net/apiary/policy/simulate/scenariogen"
)

var (
	genSeed      = flag.Uint64("seed", 0, "first seed of TestGeneratedScenariosAgree (0: a random one, printed)")
	genScenarios = flag.Int("scenarios", 20, "scenarios of TestGeneratedScenariosAgree")
	genQueries   = flag.Int("queries", 60, "queries per scenario of TestGeneratedScenariosAgree")
)

// TestGeneratedScenariosAgree is the property test: on generated
// scenarios (package scenariogen: named ports differing per pod, deny
// rules, port ranges, CIDRs with excepts, IPv6, UDP and SCTP, ICMP and
// ICMPv6 types against icmps rules, pods of another cluster) the kernel's verdict of every query and of each
// direction is the engine's. It draws a new first seed each run and
// logs it; replay with
// go test ./datapath/simulate/ -run Generated -args -seed N -scenarios 1.
func TestGeneratedScenariosAgree(t *testing.T) {
	seed := *genSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("first seed %d (replay: -args -seed %d)", seed, seed)
	failed := 0
	for i := range uint64(*genScenarios) {
		data := scenariogen.Generate(seed+i, *genQueries)
		sim, err := simulate.Load("generated.yaml", data)
		if err != nil {
			t.Fatalf("seed %d: the generator wrote a scenario the simulator refuses: %v\n%s", seed+i, err, data)
		}
		engine, kernel := runBoth(t, sim)
		if diff := differences(engine, kernel); len(diff) > 0 {
			t.Errorf("seed %d: kernel and engine differ on %d of %d queries:\n%s\nscenario:\n%s",
				seed+i, len(diff), len(engine), strings.Join(diff, "\n"), data)
			if failed++; failed == 3 {
				t.Fatal("stopping after 3 failing scenarios")
			}
		}
	}
}
