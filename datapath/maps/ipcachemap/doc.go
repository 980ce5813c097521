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
// It may import cilium/ebpf, package datapath (the boundary's plain
// types), the other datapath/maps packages it writes through (bpfmap,
// configmap) and policy/identity. Only the datapath's implementations
// (datapath/loader/..., datapath/bpfsim) and tools import it; the
// control plane sees it through datapath.IPCacheMapWriter.
package ipcachemap
