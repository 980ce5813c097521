// Package configmap is the programs' config map (bpf/lib/maps.h): one entry
// of node-wide settings the agent changes at run time. FlagVerdictEvents,
// set by the monitor while a client listens for policy verdicts, makes the
// programs report the verdicts of new flows; drops are reported
// regardless. The ipcache revision, bumped by the ipcache map writer after
// each write, makes established flows be looked up again when a peer's
// identity may have changed.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package configmap
