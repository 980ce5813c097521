// Package k8scluster runs a Kubernetes cluster on this machine for tests,
// with apiary as its network: a real kube-apiserver and
// kube-controller-manager (cells/k8s/k8stest), and nodes that are
// network namespaces on one underlay bridge, each running apiary-agent
// as the DaemonSet would (the shipped ConfigMap of install/kubernetes as
// --config-dir, the node name and IP in its environment, the agent's
// ServiceAccount token). Its "kubelet" registers the nodes and runs pods:
// a Pod created through the API server, a network namespace wired by
// apiary-cni from the node's namespace with the CNI environment kubelet
// gives, and the pod's addresses written back to its status.
//
// No route for pod CIDRs exists on the underlay: pods on two nodes reach
// each other only through what apiary sets up (the tunnel).
//
// It is a test harness under hack/: it may import any package of apiary
// (docs/design.md, Layers).
package k8scluster
