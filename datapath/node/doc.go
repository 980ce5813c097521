// Package node is the node manager: it knows every node of the cluster
// (and, through ClusterMesh, of remote clusters), merges what the sources
// say about them and drives the node handlers and the ipcache.
//
// The local node comes from --node-name, --node-ip and --pod-cidr
// (Kubernetes will be another source); it is registered in the kvstore
// at layout.NodeKey(cluster, node) in Cilium's JSON, and the
// cluster's node prefix is watched back (source kvstore). NodeUpdated and
// NodeDeleted apply Cilium's ownership rules: an update from a lower
// source than the one that owns a node is ignored, and only the owning
// source deletes it. Every change reaches the NodeHandlers registered in
// the "node-handlers" value group (NodeAdd, NodeUpdate, NodeDelete, and
// NodeValidateImplementation periodically) and puts the node's addresses
// in the ipcache: the host identity for this node, remote-node for the
// others, with the node as tunnel peer (docs/design.md, Flow 2: remote
// cluster -> ipcache -> BPF). GET /v1/node
// and `apiary node list` show the nodes.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package node
