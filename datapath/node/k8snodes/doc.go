// Package k8snodes feeds the Kubernetes Node objects to the node manager
// with source kubernetes: each node's InternalIP and ExternalIP addresses
// and its pod CIDRs (spec.podCIDRs, else spec.podCIDR). It is the
// Kubernetes input of the node manager (docs/design.md, Flow 4:
// Kubernetes objects -> caches),
// fed by the Nodes resource of cells/k8s.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package k8snodes
