// Package ctgc is the conntrack garbage collector (Cilium's
// EnableConntrackGC): a job that every --conntrack-gc-interval deletes
// the expired entries of the BPF conntrack maps (datapath/maps/ctmap) and
// counts what it did in Prometheus metrics. Its first run after an agent
// start also deletes the live entries whose endpoint address belongs to
// no endpoint the endpoint manager restored (or created since): flows of
// endpoints that vanished while the agent was down.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package ctgc
