// Package hubbletest starts, for tests, an agent hive with the real BPF
// loader (package datapath/monitor/monitortest), the ipcache and the
// hubble cell, and a scene whose three peers are pods named in the
// ipcache, so that packets run through the endpoint's programs become
// Hubble flows with pod names. The hubble cell's tests and hack/interop
// (which runs Cilium's hubble CLI against it) share it.
//
// It may import packages of cells, kvstore, policy and datapath, nothing
// of clustermesh (docs/design.md, Layers).
package hubbletest
