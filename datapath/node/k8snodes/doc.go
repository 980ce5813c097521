// Package k8snodes feeds the Kubernetes Node objects to the node manager
// with source kubernetes: each node's InternalIP and ExternalIP addresses
// and its pod CIDRs (spec.podCIDRs, else spec.podCIDR). It is the
// Kubernetes input of the node manager (DESIGN.md §3, datapath/node),
// fed by the Nodes resource of cells/k8s.
package k8snodes
