// Package metricsmap reads the programs' per-CPU metrics map: packets and
// bytes per (reason, direction), summed over CPUs, for `apiary bpf
// metrics` and the agent's Prometheus metrics.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package metricsmap
