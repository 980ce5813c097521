package k8s

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The cilium.io/v2 resources of identity allocation mode crd
// (docs/identity.md): identities are CiliumIdentity objects, endpoints
// CiliumEndpoint objects.
var (
	CiliumIdentityResource = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumidentities"}
	CiliumEndpointResource = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumendpoints"}
	// LeaseResource is coordination.k8s.io/v1 Lease, the lock of
	// LeaseElector.
	LeaseResource = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// CiliumIdentities are every cilium.io/v2 CiliumIdentity (cluster-scoped).
type CiliumIdentities interface {
	Resource[*unstructured.Unstructured]
}

// CiliumEndpoints are every cilium.io/v2 CiliumEndpoint, of every node.
type CiliumEndpoints interface {
	Resource[*unstructured.Unstructured]
}

func newCiliumIdentities(p resourceParams) CiliumIdentities {
	return newResource[*unstructured.Unstructured](resourceSpec{
		name: "cilium/v2::CiliumIdentity", object: &unstructured.Unstructured{},
		listWatch: dynamicListWatch(CiliumIdentityResource), crd: true,
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newCiliumEndpoints(p resourceParams) CiliumEndpoints {
	return newResource[*unstructured.Unstructured](resourceSpec{
		name: "cilium/v2::CiliumEndpoint", object: &unstructured.Unstructured{},
		listWatch: dynamicListWatch(CiliumEndpointResource), crd: true,
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}
