// Package labels holds the labels that identities are made of, in
// Cilium's format: source:key=value (k8s:app=web, reserved:host,
// cidr:10.0.0.0/8). An endpoint's identity-relevant labels, sorted, form
// the canonical string (k8s:a=b;k8s:c=d;) that is the kvstore value of
// its identity, so agents and meshed clusters agree on ids.
//
// It is part of the policy engine: it may import the leaves and the
// engine's packages (policy, policy/identity, policy/labels,
// policy/policyapi, policy/selectorcache and policy/source), never cells
// or kvstore, so it holds no agent glue (docs/design.md, Layers).
package labels
