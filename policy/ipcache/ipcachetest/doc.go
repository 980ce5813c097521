// Package ipcachetest helps tests of the ipcache and its users: waiting
// for changes to be applied and describing entries in one short form.
//
// It may import packages of cells, kvstore and policy, nothing of datapath
// or clustermesh and nothing that touches BPF (docs/design.md, Layers).
package ipcachetest
