// Package bpfsim answers the queries of a policy simulation
// (policy/simulate) with the kernel instead of the engine: what `apiary
// policy simulate --datapath=bpf` runs.
//
// From the simulation's Model (every endpoint's identity, addresses and
// map state, the prefixes the agent's ipcache would hold, the queries
// resolved to their sides) it mounts a private bpffs in a temporary
// directory, opens a loader (datapath/loader) there, fills the ipcache map
// and, for each local endpoint a query involves, writes its policy map
// from its map state (datapath/maps/policymap's translation, as the agent
// does) and loads its programs with its constants. Each query becomes a
// packet (Ethernet, IPv4 or IPv6, a TCP SYN, UDP or SCTP header, or an
// ICMP or ICMPv6 message of the query's type; built by
// datapath/loader/testpkt) that runs with BPF_PROG_TEST_RUN through the
// source's from_container (its egress) when the source is a local
// endpoint, then through the destination's to_container (its ingress)
// when the destination is one. Conntrack is flushed before each query, so
// every query is a new flow; the verdict of each direction is the
// program's return code, its reason the drop or policy-verdict event the
// program wrote. Close unmounts the bpffs: nothing stays pinned.
//
// Addresses: a query names endpoints or addresses; the packet needs two
// addresses of one family. An endpoint's own address of that family is
// used when it has one; otherwise (an endpoint without addresses, or a
// query mixing an IPv4 and an IPv6 address) a synthetic address from
// 100.64.0.0/10 or fd00:a9::/32, not used by the scenario, is given to the
// side's identity in the ipcache: the programs decide on identities, so
// the verdict is the one an address of the side would get.
//
// Imports: datapath/loader and the datapath/maps packages, cilium/ebpf,
// package datapath (the boundary's types: EndpointSpec, IPCacheMapEntry,
// PolicyEnforced) and the policy engine with policy/simulate. Only the CLI
// imports it.
package bpfsim
