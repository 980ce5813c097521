// Package cepsync publishes this node's endpoints as CiliumEndpoint
// objects (cilium.io/v2, Cilium's status schema), in identity allocation
// mode crd: one per pod endpoint, named as the pod, owned by it (so that
// Kubernetes deletes it with the pod too), written by the node that
// hosts the pod and kept in step with the endpoint's identity, addresses,
// named ports and state; deleted with the endpoint. At start, the
// CiliumEndpoints of this node that no restored endpoint backs (left by
// an earlier run) are deleted once the restore is done. Every node reads
// them into its ipcache (policy/ipcache/k8scep), and the identity garbage
// collector keeps the identities they name.
//
// It is the Kubernetes side of docs/design.md, Flow 3: pod -> endpoint ->
// identity, step 5.
//
// It may import packages of cells, kvstore, policy and datapath, nothing
// of clustermesh (docs/design.md, Layers).
package cepsync
