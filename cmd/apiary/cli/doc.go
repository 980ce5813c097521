// Package cli is the apiary command line: it talks to apiary-agent over
// the REST API socket (--socket, default $APIARY_SOCK or
// /var/run/apiary/apiary.sock) through package client.
//
// `apiary status` shows one aligned line per subsystem, like `cilium
// status`; `apiary hive` shows the health of every module; `apiary
// version` shows the client's and the agent's versions. When the agent
// cannot be reached, a command prints one line saying so and exits 1.
//
// It is a thin client of the REST API: it may import the leaves and
// packages that run offline (policy/simulate, datapath/bpfsim,
// cells/safefile), nothing that links etcd, go.uber.org/dig or client-go
// (docs/design.md, Layers).
package cli
