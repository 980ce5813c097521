// Package scenariogen draws random simulation scenarios (the file format
// of policy/simulate) from a seed, for the property tests that compare
// two ways of answering the same queries: the BPF datapath against the
// engine (datapath/bpfsim) and apiary's engine against Cilium's
// (hack/bench/policydiff). The same seed and Options always give the
// same scenario.
//
// A scenario has namespaces with labels; pods of two clusters with
// labels and, on local pods, named ports whose numbers differ from pod
// to pod; NetworkPolicies, CiliumNetworkPolicies (one rule or specs) and
// CiliumClusterwideNetworkPolicies with allow and deny rules (and denies
// overlapping allows), enableDefaultDeny, label selectors with
// matchExpressions, namespace, namespace-label and cluster selectors,
// entities, CIDR peers with excepts in both families, port numbers,
// ranges, named ports and "0" with or without a protocol; and queries
// between pods by name and addresses that are no pods over TCP, UDP and
// SCTP. Options add what not every caller can compare: IPv6, dual-stack
// and addressless pods, queries by a pod's address and from a pod to
// itself, icmps rules with ICMP and ICMPv6 queries, and inputs apiary
// reads differently from Cilium on purpose.
//
// Inputs the engines accept differently are never generated:
//   - Cilium refuses rules combining two peer kinds (fromEndpoints and
//     fromCIDR, ...); apiary accepts them. One peer kind per rule.
//   - apiary refuses a CiliumNetworkPolicy endpointSelector naming the
//     namespace (Cilium overrides it with a warning) and an except equal
//     to its cidr (Cilium accepts it). Namespaced subjects never name a
//     namespace; excepts are strictly inside.
//   - The CRD schema, which the API server applies before Cilium sees a
//     policy, refuses lower-case protocols; apiary accepts them.
//     Protocols are upper case.
//   - Remote pods declare no named ports: Cilium's ipcache knows the
//     named ports of its own cluster's pods.
//
// Nor, unless Options.Divergent, are the semantic differences
// docs/policy.md lists under "Differences from Cilium" (enableDefaultDeny
// true in a direction without entries, icmps of ICMP type 0), and never
// the world-ipv4 and world-ipv6 entities.
//
// It may import the policy engine and the leaves, never cells or kvstore:
// it runs offline (docs/design.md, Layers).
package scenariogen
