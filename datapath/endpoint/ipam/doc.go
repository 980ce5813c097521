// Package ipam is the endpoint manager's host-scope IP address
// allocator: it hands out the addresses of the node's pod CIDRs
// (--pod-cidr, one IPv4 and one IPv6 at most), keeping back the network
// address, the IPv4 broadcast address and the router (gateway) address,
// the first after the network address, which endpoints route through.
//
// After an agent restart, the addresses of the restored endpoints are
// reserved again (AllocateIP) before any new allocation: an IPAM is made
// in the restoring state, in which Allocate refuses, until RestoreDone.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package ipam
