package policydiff

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/policy/simulate"
)

// knownEgressNamedPortBug hides the known difference: apiary resolves a
// named port of an egress rule against the source endpoint's own ports,
// Cilium against the destination's (the fix is on branch namedports).
// While true, a difference in the source's egress verdict on a port
// that some pod declares under a name used by an egress rule of the
// scenario is counted and logged, not failed. Flip it to false when the
// fix is merged.
const knownEgressNamedPortBug = true

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
	var queries, compared, hidden, failures int
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
			queries, compared, hidden = queries+q, compared+n, hidden+h
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
	if hidden > 0 {
		t.Logf("knownEgressNamedPortBug hides %d egress differences", hidden)
	}
}

// compare returns how many queries and directions it compared, how many
// differences knownEgressNamedPortBug hides, the others, one line each,
// and the queries with them.
func compare(c *Case, apiary, cilium []Verdicts) (queries, directions, hidden int, diffs []string, differing []simulate.Query) {
	for i, q := range c.Scenario.Queries {
		a, ci := apiary[i], cilium[i]
		for _, d := range []struct {
			name      string
			got, want Decision
		}{{"egress", a.Egress, ci.Egress}, {"ingress", a.Ingress, ci.Ingress}} {
			if d.got == NoSubject && d.want == NoSubject {
				continue
			}
			directions++
			if d.got == d.want {
				continue
			}
			if d.name == "egress" && knownEgressNamedPortBug && egressNamedPortCase(c, q) {
				hidden++
				continue
			}
			diffs = append(diffs, fmt.Sprintf("  %s -> %s %d/%s %s: apiary %s, cilium %s",
				q.From, q.To, q.Port, q.Protocol, d.name, d.got, d.want))
			if len(differing) == 0 || differing[len(differing)-1] != q {
				differing = append(differing, q)
			}
		}
	}
	return len(c.Scenario.Queries), directions, hidden, diffs, differing
}

// egressNamedPortCase reports whether q's port and protocol are those of
// a named port that some pod of c declares under a name that egress
// rules of c use: the only queries whose egress verdict the known
// named-port bug can change.
func egressNamedPortCase(c *Case, q simulate.Query) bool {
	for _, ep := range c.Scenario.Endpoints {
		for _, p := range ep.Ports {
			if c.EgressPortNames[p.Name] && p.Port == q.Port && strings.EqualFold(p.Protocol, q.Protocol) {
				return true
			}
		}
	}
	return false
}
