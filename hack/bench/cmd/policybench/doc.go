// Command policybench runs apiary's policy engine (package policy) and
// Cilium's (github.com/cilium/cilium/pkg/policy, v1.20, wired as its
// agent wires it: package ciliumpolicy) on the same workload in the same
// process, and prints per step apiary's figure, Cilium's and the ratio
// apiary/Cilium (the goal for every ratio: below 1).
//
// The workload (package policyload) is generated once as label maps and
// YAML documents, which each engine turns into its own types with its
// own parser: 10,000 identities app=<n%100>, 1,000
// CiliumNetworkPolicies, policy i selecting app=i%100 and allowing
// ingress from another app on 80/TCP. The endpoint of the one-endpoint
// steps has identity 0 (app=0).
//
// Each step is a testing.Benchmark per engine, the engines alternating
// which goes first; the table shows the median of -rounds rounds. The
// live heap is the growth of the heap (after GC) from building
// everything from the workload's data: identities known, policies
// parsed and inserted, the endpoints resolved and distilled.
//
//	cd hack/bench && go run ./cmd/policybench [-rounds 5] [-benchtime 200ms]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
