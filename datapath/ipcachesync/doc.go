// Package ipcachesync writes the ipcache (policy/ipcache) to the BPF
// ipcache map (docs/design.md, Flow 2: remote cluster -> ipcache -> BPF):
// a listener queues the cache's
// changes and a trigger writes them in batches through a
// datapath.IPCacheMapWriter; once the cache has done its initial sync
// (the cluster's kvstore entries listed) and the endpoints of the state
// dir are back in it, a full reconcile removes what the map holds that
// the cache does not (entries a previous agent left behind). It imports
// no cilium/ebpf: the writer is the loader cell's adapter, or a fake.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package ipcachesync
