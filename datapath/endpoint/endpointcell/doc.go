// Package endpointcell wires the endpoint manager (package endpoint)
// into the agent: the IPAM of the local node's pod CIDRs, the restore
// from the state dir at start, the subscription to the policy cell's
// regeneration requests, incremental policy map updates on identity
// changes, PUT/DELETE/GET /v1/endpoint[/{id}] and the "Endpoints" status
// line.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package endpointcell
