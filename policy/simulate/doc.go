// Package simulate answers "would this connection be allowed?" offline,
// with no agent and no kvstore: it reads a scenario (namespaces,
// endpoints, policies and queries in one YAML file), builds the identities
// the agent would allocate for its endpoints and addresses, runs the
// policy engine (package policy) over them as the agent's policy flow does
// (DESIGN.md: rules into the repository, identities into the selector
// cache, every endpoint's named ports into a policy.PeerPortTable for
// egress rules' port names, each endpoint's policy resolved and distilled
// into its map state), and reads each query's verdict off the map states
// with policy.Verdict (ICMP and ICMPv6 queries with their type in the
// port's place, as the policy map keys them). It is what `apiary policy simulate` runs;
// docs/policy.md, "Simulation", describes the file format and the
// semantics.
//
// Load (or ParseScenario then New) validates a scenario and prepares the
// simulation; Run answers its queries, RunExplain also says what decided
// each direction; WriteText prints results as the CLI does; Warnings
// returns the policies' warnings (api.Warning).
//
// The verdicts come from the engine. The explanations (which rule
// decided) do not, since a map state keeps no trace of the rules behind
// its keys: they come from evaluating the repository's rules directly,
// deny rules first, for the same subject, peer and port, and a decision
// whose evaluation disagrees with the engine says so in its reason.
//
// Imports: the policy engine and its plain packages (policy, identity,
// labels, selectorcache, policyapi) and YAML; no framework or etcd
// (hack/check-layers.sh: simulate runs offline).
package simulate
