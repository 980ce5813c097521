// Package datapathtest is a fake datapath for unit tests of the control
// plane: one Fake implements every interface of package datapath in
// memory, records the calls, keeps the state a real datapath would
// (links, attached endpoints, policy maps, ipcache map, node routes) and
// fails calls on demand. Cell provides it to a hive.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package datapathtest
