// Package identitycell runs the identity allocator (package
// policy/identity/identitycache) in the agent: the identity cell with
// its --identity-allocation-mode, --identity-gc-interval,
// --identity-heartbeat-timeout and --labels flags, the kvstore
// allocator's jobs (watch, reference repair, garbage collection) or, in
// mode crd, the CiliumIdentity allocator's (watch, repair, and the
// garbage collector run by the holder of a Lease), GET /v1/identity,
// the identity metrics and the "Identities" status line (docs/design.md,
// Flow 3: pod -> endpoint -> identity). The plain types are in package
// identity, the allocator and its contracts in identitycache.
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package identitycell
