// Package endpointsmap is the programs' endpoints map (bpf/lib/maps.h): an
// array indexed by endpoint id holding state the agent changes without
// reloading an endpoint's programs, today the revision of the endpoint's
// policy map. The loader bumps it after every policy-map write that
// changed something; a conntrack entry allowed under another revision has
// its flow's policy looked up again on its next packet, so that policy
// changes reach established flows.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package endpointsmap
