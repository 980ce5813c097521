package policydiff

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/simulate"
)

// Decision is the verdict of one direction of a query.
type Decision uint8

// Decisions. NoSubject: the side is no endpoint of the local cluster, so
// no policy of the scenario applies to it in that direction. Unpoliced:
// apiary's datapath passes the traffic before any policy lookup (ICMPv6
// neighbour discovery, docs/policy.md), so there is no engine decision
// to compare.
const (
	NoSubject Decision = iota
	Allowed
	Denied
	Unpoliced
)

func (d Decision) String() string {
	return [...]string{"no subject", "allowed", "denied", "unpoliced"}[d]
}

// Verdicts are the decisions of a query's two directions: the source's
// egress and the destination's ingress.
type Verdicts struct{ Egress, Ingress Decision }

// RunApiary runs c through apiary's simulator and returns the verdicts
// of its queries, in order. A decision the simulator's rule evaluation
// disagrees with is an error.
func RunApiary(c *Case) ([]Verdicts, error) {
	s := c.Scenario
	for i, doc := range c.Policies {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			return nil, fmt.Errorf("policy %d: %w", i, err)
		}
		s.Policies = append(s.Policies, *n.Content[0])
	}
	sim, err := simulate.New("scenario.yaml", &s)
	if err != nil {
		return nil, err
	}
	results := sim.RunExplain()
	out := make([]Verdicts, len(results))
	for i, r := range results {
		for _, d := range []struct {
			got  *simulate.Decision
			want *Decision
		}{{r.Egress, &out[i].Egress}, {r.Ingress, &out[i].Ingress}} {
			switch {
			case strings.HasPrefix(d.got.Reason, "engine says"):
				return nil, fmt.Errorf("query %s: apiary's rule evaluation disagrees with its engine: %s", r, d.got.Reason)
			case d.got.Reason == simulate.ReasonNotEndpoint || d.got.Reason == simulate.ReasonOtherCluster:
				*d.want = NoSubject
			case d.got.Reason == simulate.ReasonNeighbourDiscovery:
				*d.want = Unpoliced
			case d.got.Verdict == simulate.Allowed:
				*d.want = Allowed
			default:
				*d.want = Denied
			}
		}
	}
	return out, nil
}
