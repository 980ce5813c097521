// Command cepbench measures identity allocation mode crd at scale
// (issue 23): 100 simulated nodes each reading 10,000 CiliumEndpoints
// from a real kube-apiserver into their own ipcache (the Kubernetes
// cell's CiliumEndpoint resource and policy/ipcache/k8scep, one client
// per node as each agent has), timed until every node holds every other
// node's endpoints, next to one client-go dynamic informer per node on
// the same objects (goal: ratio <= 1.5), with the CPU time and the live
// heap of each side.
//
//	cd hack/bench && go run ./cmd/cepbench [-runs 3] [-nodes 100 -endpoints 10000 -watchers 100]
//
// It is in a Go module of its own, as the other benchmarks.
package main
