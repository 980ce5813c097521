// Package metricsmap reads the programs' per-CPU metrics map: packets and
// bytes per (reason, direction), summed over CPUs, for `apiary bpf
// metrics` and the agent's Prometheus metrics.
package metricsmap
