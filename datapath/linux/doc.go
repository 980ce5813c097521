// Package linux implements the datapath's plumbing with netlink:
// datapath.EndpointLinks (an endpoint's veth pair, its addresses,
// routes and static neighbours, and the sysctls the host side needs)
// and datapath.NodeRoutes (routes to other nodes' pod CIDRs, native
// routing). Cell provides both.
//
// Everything happens in the "host" network namespace: the agent's own,
// or the one --datapath-netns names (the demo lab and the tests run
// several nodes in one machine, each in its namespace). Each operation
// runs on a goroutine locked to a thread that entered the namespace; the
// thread is dropped afterwards, so no other goroutine ever runs in it
// (netnsutil.Run).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package linux
