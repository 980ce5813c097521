// Package k8stest starts a real kube-apiserver for tests: the binary that
// `make kube-apiserver` builds from the Go module proxy (hack/tools/kube),
// on 127.0.0.1 against an etcd embedded in the test process, with token
// authentication, RBAC and service-account signing keys, as a cluster's
// control plane would run it (docs/design.md, Cells and their lifecycle:
// cells are tested against the real thing).
//
//	srv := k8stest.Start(t)
//	cs := kubernetes.NewForConfigOrDie(srv.AdminConfig())
//
// Server.StartControllerManager adds the real kube-controller-manager
// (`make kube-controller-manager`) with only its node IPAM controller,
// which gives every Node its spec.podCIDRs:
//
//	srv.StartControllerManager(t, k8stest.NodeIPAM{ClusterCIDRs: []string{"10.244.0.0/16"}, MaskSizeIPv4: 24})
//
// A test that needs it skips, saying why, only when the binary is missing
// and cannot be built; everything is torn down when the test ends.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package k8stest
