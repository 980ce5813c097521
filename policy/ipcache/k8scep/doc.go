// Package k8scep reads every node's CiliumEndpoints into the ipcache in
// identity allocation mode crd, as Cilium's agent does: each address of
// a CiliumEndpoint of another node becomes an entry with source
// custom-resource, the endpoint's identity (status.identity.id) and the
// hosting node's IP (status.networking.node) as tunnel peer, with the
// pod's namespace, name and named ports. This node's own are skipped
// (its endpoints are in the ipcache with source local). The cache is
// registered with the cache-sync gate.
//
// It is the crd-mode writer of docs/design.md, Flow 2: remote cluster ->
// ipcache -> BPF, step 4 (the kvstore mode's is ipcache.ClusterWatcher).
//
// It may import packages of cells, kvstore and policy, nothing of
// datapath or clustermesh (docs/design.md, Layers).
package k8scep
