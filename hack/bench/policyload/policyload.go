package policyload

import (
	"fmt"
	"strings"
)

// The workload's size and names.
const (
	Identities = 10_000
	Policies   = 1_000
	Apps       = 100
	Namespace  = "default"
	Cluster    = "default"
	// FirstID is the numeric identity of identity 0, the first id both
	// engines' global allocators hand out.
	FirstID = 256
)

// Label keys the agent puts on every pod's identity (source k8s).
const (
	LabelPodNamespace = "io.kubernetes.pod.namespace"
	LabelCluster      = "io.cilium.k8s.policy.cluster"
)

// Labels returns the identity labels of identity n (all of source k8s):
// app, instance, the pod namespace and the cluster.
func Labels(n int) map[string]string {
	return map[string]string{
		"app":             fmt.Sprint(n % Apps),
		"instance":        fmt.Sprint(n),
		LabelPodNamespace: Namespace,
		LabelCluster:      Cluster,
	}
}

// UnselectedLabels returns the labels of an extra identity n that no
// policy of the workload selects, as a peer or as a subject.
func UnselectedLabels(n int) map[string]string {
	ls := Labels(n)
	ls["app"] = "unselected"
	return ls
}

// ID returns the numeric identity of identity n.
func ID(n int) uint32 { return uint32(FirstID + n) }

// SelectedExtra returns the index of the k-th extra identity (beyond
// Identities) with app=1, which the policies of app=0 endpoints select
// as a peer (policy 0 allows app=1).
func SelectedExtra(k int) int { return Identities + 1 + k*Apps }

// UnselectedExtra returns the index of the k-th extra identity with
// UnselectedLabels; for k below 10,000 it is no SelectedExtra index.
func UnselectedExtra(k int) int { return Identities + 1_000_000 + k }

// Allows reports whether the policies of app subject allow ingress from
// app peer: policy i allows app (i%Apps + 1 + i/Apps) % Apps.
func Allows(subject, peer int) bool {
	for j := range Policies / Apps {
		if (subject+1+j)%Apps == peer {
			return true
		}
	}
	return false
}

// EndpointsAllowing returns how many of the endpoints of apps
// 0..endpoints-1 allow ingress from app peer.
func EndpointsAllowing(endpoints, peer int) int {
	n := 0
	for app := range endpoints {
		if Allows(app, peer) {
			n++
		}
	}
	return n
}

// PolicyYAML returns the Policies documents, separated by "---".
func PolicyYAML() []byte {
	var b strings.Builder
	for i := range Policies {
		fmt.Fprintf(&b, `---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: p%d, namespace: %s}
spec:
  endpointSelector: {matchLabels: {app: "%d"}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: "%d"}}]
    toPorts: [{ports: [{port: "80", protocol: TCP}]}]
`, i, Namespace, i%Apps, (i%Apps+1+i/Apps)%Apps)
	}
	return []byte(b.String())
}
