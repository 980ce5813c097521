package policydiff

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/policy/simulate"
)

var (
	seedFlag      = flag.Uint64("seed", 0, "first scenario seed (0: from the clock); a failure prints it")
	scenariosFlag = flag.Int("scenarios", 300, "scenarios to generate")
	queriesFlag   = flag.Int("queries", 200, "queries per scenario")
)

// TestAgainstCilium runs generated scenarios through apiary's simulator
// and Cilium's engine and fails on any difference in a verdict, or in
// accepting a scenario.
func TestAgainstCilium(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seeds %d..%d (-args -seed %d to replay)", seed, seed+uint64(*scenariosFlag)-1, seed)
	var queries, compared, failures int
	var hidden hiddenDiffs
	for i := range *scenariosFlag {
		c := Generate(seed+uint64(i), *queriesFlag)
		av, aerr := RunApiary(c)
		cv, cerr := RunCilium(c)
		switch {
		case aerr != nil || cerr != nil:
			t.Errorf("seed %d: apiary: %v; cilium: %v\nscenario:\n%s", c.Seed, aerr, cerr, c.YAML(nil))
			failures++
		default:
			q, n, h, diffs, differing := compare(c, av, cv)
			queries, compared = queries+q, compared+n
			hidden.unpoliced += h.unpoliced
			if len(diffs) > 0 {
				t.Errorf("seed %d: %d of %d directions differ:\n%s\nscenario:\n%s", c.Seed, len(diffs), n,
					strings.Join(diffs, "\n"), c.YAML(differing))
				failures++
			}
		}
		if failures >= 3 {
			t.Fatalf("stopping after %d failed scenarios", failures)
		}
	}
	t.Logf("%d scenarios, %d queries, %d directions compared", *scenariosFlag, queries, compared)
	if hidden.unpoliced > 0 {
		t.Logf("%d directions of ICMPv6 neighbour discovery not compared: apiary never polices it", hidden.unpoliced)
	}
}

// hiddenDiffs counts the directions not compared: those apiary never
// polices (Unpoliced), which Cilium's engine alone cannot decide.
type hiddenDiffs struct{ unpoliced int }

// compare returns how many queries and directions it compared, the
// differences it hides, the others, one line each, and the queries with
// them.
func compare(c *Case, apiary, cilium []Verdicts) (queries, directions int, hidden hiddenDiffs, diffs []string, differing []simulate.Query) {
	for i, q := range c.Scenario.Queries {
		a, ci := apiary[i], cilium[i]
		for _, d := range []struct {
			name      string
			got, want Decision
		}{{"egress", a.Egress, ci.Egress}, {"ingress", a.Ingress, ci.Ingress}} {
			if d.got == NoSubject && d.want == NoSubject {
				continue
			}
			if d.got == Unpoliced {
				hidden.unpoliced++
				continue
			}
			directions++
			if d.got == d.want {
				continue
			}
			diffs = append(diffs, fmt.Sprintf("  %s -> %s %s %s: apiary %s, cilium %s",
				q.From, q.To, queryTraffic(q), d.name, d.got, d.want))
			if len(differing) == 0 || differing[len(differing)-1] != q {
				differing = append(differing, q)
			}
		}
	}
	return len(c.Scenario.Queries), directions, hidden, diffs, differing
}

// queryProtocol returns q's protocol, TCP when it names none.
func queryProtocol(q simulate.Query) string {
	if q.Protocol == "" {
		return "TCP"
	}
	return q.Protocol
}

// queryTraffic returns "port/protocol", or "protocol type N" for ICMP
// and ICMPv6.
func queryTraffic(q simulate.Query) string {
	if q.Type != "" {
		return queryProtocol(q) + " type " + q.Type
	}
	return fmt.Sprintf("%d/%s", q.Port, queryProtocol(q))
}

// TestCaseYAMLLoads checks that the scenario a failure prints is a
// scenario file apiary's simulator reads, with the same verdicts.
func TestCaseYAMLLoads(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		c := Generate(seed, 50)
		want, err := RunApiary(c)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sim, err := simulate.Load("scenario.yaml", []byte(c.YAML(c.Scenario.Queries)))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, c.YAML(c.Scenario.Queries))
		}
		for i, r := range sim.Run() {
			allowed := want[i].Egress != Denied && want[i].Ingress != Denied
			if (r.Verdict == simulate.Allowed) != allowed {
				t.Fatalf("seed %d: %s, want allowed=%v", seed, r, allowed)
			}
		}
	}
}
