// Package endpointcell wires the endpoint manager (package endpoint)
// into the agent: the IPAM of the local node's pod CIDRs, the restore
// from the state dir at start, the subscription to the policy cell's
// regeneration requests, incremental policy map updates on identity
// changes, PUT/DELETE/GET /v1/endpoint[/{id}] and the "Endpoints" status
// line.
//
// Imports: the framework (cells/...), the endpoint manager with its IPAM
// and pod labels, package datapath's interfaces, the policy and identity
// cells' contracts, and policyapi for the requests' named ports; never the
// BPF loader or maps, which the agent composes alongside.
package endpointcell
