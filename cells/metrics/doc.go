// Package metrics holds the agent's Prometheus registry and serves it on
// --prometheus-serve-addr (off when empty).
//
// Cells add collectors through the "metrics" value group (see Out). The
// registry also has the Go runtime and process collectors and
// apiary_agent_bootstrap_seconds{phase}: how long populate and start took,
// and the time from process start until the hive had started ("overall").
// The "Metrics" line of `apiary status` says where metrics are served.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package metrics
