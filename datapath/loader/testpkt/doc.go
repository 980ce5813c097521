// Package testpkt builds Ethernet frames (IPv4 or IPv6 with TCP, UDP,
// SCTP, ICMP or ICMPv6) to run through the endpoint programs with
// BPF_PROG_TEST_RUN: the verdict tests, the datapath benchmark, and
// `simulate --datapath=bpf`. Checksums are left zero: the programs do not
// read them.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package testpkt
