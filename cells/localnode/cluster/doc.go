// Package cluster holds what identifies this node's cluster in a mesh: its
// name, its id and the mesh size (--cluster-name, --cluster-id,
// --max-connected-clusters, registered by the local-node cell beside it),
// the one validation of cluster names and ids, and the cluster
// configuration Cilium publishes for remote clusters to check.
//
// It is a leaf at the bottom layer: it imports nothing of apiary, so the
// agent's cells, the policy engine, the offline simulator, the datapath
// and the clustermesh watchers all use it without importing upwards.
package cluster
