// Package ipcachemap is the BPF ipcache map: an LPM trie from IP prefixes to
// security identities that the endpoint programs look a new flow's peer up
// in (a miss is world-ipv4 or world-ipv6, by the packet's family). The ipcache cell's listener writes it in batches
// (ApplyBatch) and reconciles it in full after the initial sync
// (Reconcile), removing entries the control plane no longer has.
//
// It takes and returns the boundary's datapath.IPCacheMapEntry and
// datapath.IPCacheMapChange as they are, so the control plane's changes
// reach the map without a copy; Key and Value are the map's layout.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package ipcachemap
