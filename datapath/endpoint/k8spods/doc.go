// Package k8spods gives endpoints the labels of their Kubernetes pods:
// the pod's labels, its namespace's labels, its service account and the
// cluster, with Cilium's prefixes (Labels). An endpoint created with a pod
// namespace and name (the CNI plugin sends them) takes its labels from
// the pod (Source); when a pod's labels, or its namespace's, change, the
// endpoints of the pod get the new labels and so a new identity
// (endpoint.Manager.UpdateLabels).
//
// It is the "labels" step of docs/design.md, Flow 3: pod -> endpoint ->
// identity, fed by the Pods and Namespaces resources of cells/k8s;
// both caches are registered with the cache-sync gate.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package k8spods
