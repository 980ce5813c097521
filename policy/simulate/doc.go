// Package simulate answers "would this connection be allowed?" offline,
// with no agent and no kvstore: it reads a scenario (namespaces,
// endpoints, policies and queries in one YAML file), builds the identities
// the agent would allocate for its endpoints and addresses, runs the
// policy engine (package policy) over them exactly as the agent does, and
// reads each query's verdict off the endpoints' map states with
// policy.Verdict. It is what `apiary policy simulate` runs; docs/policy.md,
// "Simulation", describes the file format and the semantics.
//
// The verdicts come from the engine. The explanations (which rule
// decided) do not, since a map state keeps no trace of the rules behind
// its keys: Explain evaluates the repository's rules directly, deny rules
// first, for the same subject, peer and port, and the simulator checks
// that this evaluation agrees with the engine's verdict.
package simulate
