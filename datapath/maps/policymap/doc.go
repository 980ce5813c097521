// Package policymap is the per-endpoint BPF policy map: an LPM trie keyed by
// {peer identity, direction, protocol, port prefix} whose values say allow
// or deny and count the packets and bytes of the flows they decided.
//
// Translate turns the control plane's map state (policy.MapState, from
// EndpointPolicy.ConsumeMapState) into map entries; Sync writes only the
// difference between that and the map's content, ignoring the counters.
// The loader hands the map to an endpoint's programs at load time.
//
// A map state larger than the map is refused with the boundary's
// *datapath.PolicyMapFullError; DefaultMaxEntries is the one default of
// its size (--bpf-policy-map-max, the loader cell's flag).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package policymap
