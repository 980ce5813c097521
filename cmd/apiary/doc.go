// Command apiary is the command line client of apiary-agent. See package
// github.com/apiary-net/apiary/cmd/apiary/cli.
//
// It is a thin client of the REST API: it may import the leaves and
// packages that run offline (policy/simulate, datapath/bpfsim,
// cells/safefile), nothing that links etcd, go.uber.org/dig or client-go
// (docs/design.md, Layers).
package main
