// Package policycell runs the policy engine in the agent (Cell): it
// provides the policy.Repository and the selector cache, loads policies
// from --policy-dir and PUT/GET/DELETE /v1/policy (keeping the API's in
// the state dir), allocates the CIDR identities of the prefixes rules
// name, debounces regeneration requests for the endpoint manager
// (RegenerationRequests), feeds the ipcache's named ports to the engine
// and serves POST /v1/policy/trace: the agent's side of DESIGN.md's
// policy-change flow.
//
// Imports: the framework (cells/...), the policy engine and its
// packages, the identity allocator and the ipcache with its cell; never
// the datapath, a layer above it (hack/check-layers.sh). Trace learns the
// policy maps' size, the loader cell's --bpf-policy-map-max, as an
// optional policy.MapStateLimit.
package policycell
