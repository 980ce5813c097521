package scenariogen

import (
	"math/rand/v2"
	"slices"

	"github.com/apiary-net/apiary/policy/simulate"
)

// The clusters of every scenario: policies apply to endpoints of
// LocalCluster; RemoteCluster is a meshed cluster.
const (
	LocalCluster  = "cluster1"
	RemoteCluster = "cluster2"
)

// Options say how many queries a scenario has and which features beyond
// the common ones it may hold.
type Options struct {
	// Queries is the number of queries.
	Queries int
	// Families gives pods IPv6 only, both families or no address; else
	// every pod has one IPv4 address.
	Families bool
	// AddressQueries lets a query name a pod by one of its addresses.
	AddressQueries bool
	// SelfQueries lets a query go from a pod to itself (by name or
	// address).
	SelfQueries bool
	// ICMP adds icmps rules and ICMP and ICMPv6 queries by type.
	ICMP bool
	// Divergent allows what apiary decides differently from Cilium on
	// purpose (docs/policy.md, "Differences from Cilium"):
	// enableDefaultDeny true in a direction without entries, and icmps
	// fields of ICMP type 0 (EchoReply), which Cilium 1.20 reads as every
	// ICMP type (cilium/cilium#41304).
	Divergent bool
}

// Case is one generated scenario.
type Case struct {
	Seed uint64
	// Scenario holds everything but the policies.
	Scenario simulate.Scenario
	// Policies are the policy objects, one YAML document each.
	Policies []string
	// EgressPortNames are the port names (lower case) that egress rules
	// use, for a reader of a case who looks for named-port queries.
	EgressPortNames map[string]bool
}

// New returns the scenario of seed: 2-3 namespaces with labels, 4-12
// pods of the local cluster and 0-2 of the remote one, 1-6 policies and
// opts.Queries queries.
func New(seed uint64, opts Options) *Case {
	g := &gen{
		r:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		opts: opts,
		c:    &Case{Seed: seed, EgressPortNames: map[string]bool{}},
	}
	s := &g.c.Scenario
	s.Cluster = LocalCluster
	if g.chance(0.2) {
		f := false
		s.PolicyDefaultLocalCluster = &f
	}
	g.namespaces = slices.Clone(allNamespaces[:2+g.r.IntN(2)])
	for _, ns := range g.namespaces {
		ls := map[string]string{}
		if g.chance(0.8) {
			ls["team"] = pick(g.r, teamValues)
		}
		if g.chance(0.5) {
			ls["env"] = pick(g.r, envValues)
		}
		s.Namespaces = append(s.Namespaces, simulate.Namespace{Name: ns, Labels: ls})
	}
	local, remote := 4+g.r.IntN(9), g.r.IntN(3)
	for i := range local + remote {
		s.Endpoints = append(s.Endpoints, g.endpoint(i, i >= local))
	}
	for i := range 1 + g.r.IntN(6) {
		g.c.Policies = append(g.c.Policies, g.policy(i))
	}
	for range opts.Queries {
		s.Queries = append(s.Queries, g.query())
	}
	return g.c
}

// gen draws one scenario.
type gen struct {
	r          *rand.Rand
	opts       Options
	namespaces []string
	c          *Case
	// ports are the port numbers the policies name, with the edges of
	// their ranges and their neighbours: queries aim at them.
	ports []int
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }
