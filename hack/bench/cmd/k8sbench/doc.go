// Command k8sbench measures the initial Kubernetes sync of the agent
// against a real kube-apiserver filled with 10,000 pods,
// 1,000 namespaces and 1,000 policies (half NetworkPolicies, 4/10 CNPs,
// 1/10 CCNPs): the agent's Kubernetes cells, composed as the agent
// composes them, from populate to the CacheSync gate opening, next to
// bare client-go shared informers syncing the same objects in the same
// run (goal: ratio <= 1.5), and the live heap each holds afterwards.
//
// By default every pod is on this node (-local-pods 10000), so that both
// sides sync 10,000 pods, the benchmark's size; a real node holds far fewer
// (try -local-pods 100: the server then filters by spec.nodeName).
//
//	cd hack/bench && go run ./cmd/k8sbench [-runs 5] [-warmup 1] [-pods 10000 -local-pods 10000]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
