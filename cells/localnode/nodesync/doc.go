// Package nodesync fills the local-node store from this node's
// Kubernetes Node object with --ipam=kubernetes (Cilium's
// pkg/node/sync): at start, localnode's store reads the Node through the
// NodeSource provided here (the node IP when --node-ip is not set, the
// pod CIDRs when the Node has them); afterwards a job watches the Node
// and gives the store its spec.podCIDRs once kube-controller-manager has
// allocated them, which ends the endpoint IPAM's wait
// (datapath/endpoint/endpointcell). With Kubernetes (any --ipam) a job
// also follows the Node's zone label (topology-aware routing) and
// whether it is being deleted (kube-proxy's health check).
//
// It is infrastructure of the cells layer: it imports cells/k8s and
// cells/localnode, nothing of a later layer (docs/design.md, Layers).
package nodesync
