// Package netnstest creates network namespaces for tests and runs code
// inside them, so that tests plumb veths and routes in namespaces of
// their own and never in the machine's root namespace.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package netnstest
