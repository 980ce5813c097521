package policydiff

import "github.com/apiary-net/apiary/policy/simulate/scenariogen"

// The clusters of every scenario: policies apply to endpoints of
// LocalCluster; RemoteCluster is a meshed cluster.
const (
	LocalCluster  = scenariogen.LocalCluster
	RemoteCluster = scenariogen.RemoteCluster
)

// Case is one generated scenario.
type Case = scenariogen.Case

// Options returns the scenariogen options of the comparison: every
// feature but two. Not Divergent: those are the differences
// docs/policy.md lists under "Differences from Cilium". Not
// SelfQueries: traffic from a pod to itself never leaves it in apiary's
// simulator (allowed without policy), while Cilium's EndpointPolicy
// lookup would decide it as any other peer's.
func Options(queries int) scenariogen.Options {
	return scenariogen.Options{Queries: queries, Families: true, AddressQueries: true, ICMP: true}
}

// Generate returns the scenario of seed with the given number of
// queries.
func Generate(seed uint64, queries int) *Case {
	return scenariogen.New(seed, Options(queries))
}
