// Package policycell runs the policy engine (package policy) in the agent:
// the Repository and the selector cache, the policy sources (--policy-dir
// files, PUT/GET/DELETE /v1/policy kept in <state-dir>/policy/api.json,
// and the Objects source that policy/k8spolicy feeds), the CIDR identities
// of the prefixes rules mention, debounced endpoint regeneration requests
// (RegenerationRequests), POST /v1/policy/trace and the "Policy" status
// line (docs/design.md, Flow 1: policy -> BPF policy map).
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
// Trace learns the policy maps' size, the loader cell's
// --bpf-policy-map-max, as an optional policy.MapStateLimit.
package policycell
