package bpfsim_test

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

// generatedOptions are the scenariogen options of the property test:
// every feature, since the datapath must answer as the engine does
// whatever the engine decides, Cilium-compatible or not.
func generatedOptions(queries int) scenariogen.Options {
	return scenariogen.Options{Queries: queries, Families: true, AddressQueries: true, SelfQueries: true,
		ICMP: true, Divergent: true}
}

// TestGeneratedScenariosAgree is the property test: on generated
// scenarios (package scenariogen with every option: named ports
// differing per pod, deny rules, port ranges, CIDRs with excepts, IPv6,
// dual-stack and addressless pods, queries by address and to self, UDP
// and SCTP, ICMP and ICMPv6 types against icmps rules, pods of another
// cluster) the kernel's verdict of every query and of each direction is
// the engine's. It draws a new first seed each run and
// logs it; replay with
// go test ./datapath/bpfsim/ -run Generated -args -seed N -scenarios 1.
func TestGeneratedScenariosAgree(t *testing.T) {
	seed := *genSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	t.Logf("first seed %d (replay: -args -seed %d)", seed, seed)
	failed := 0
	for i := range uint64(*genScenarios) {
		data := scenariogen.New(seed+i, generatedOptions(*genQueries)).File()
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
