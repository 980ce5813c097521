// Package nodecell wires the node manager (package datapath/node) into the
// agent: the node-manager cell with the "node-handlers" value group, GET
// /v1/node and the "Nodes" status line; with a kvstore it registers this
// node under layout.NodeKey(<cluster>, <node>) and watches the
// cluster's nodes (docs/design.md, Flow 2: remote cluster -> ipcache ->
// BPF).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package nodecell
