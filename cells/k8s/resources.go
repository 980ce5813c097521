package k8s

import (
	"context"
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode"
)

// The resources the cell provides. CiliumNetworkPolicies and
// CiliumClusterwideNetworkPolicies are distinct types because both hold
// unstructured objects.
type (
	// Pods are the pods scheduled on this node (spec.nodeName).
	Pods = Resource[*corev1.Pod]
	// Namespaces are every namespace.
	Namespaces = Resource[*corev1.Namespace]
	// Nodes are every node.
	Nodes = Resource[*corev1.Node]
	// Services are the services this agent handles (ServiceSelector).
	Services = Resource[*corev1.Service]
	// EndpointSlices are the endpoint slices of those services
	// (ServiceSelector).
	EndpointSlices = Resource[*discoveryv1.EndpointSlice]
	// NetworkPolicies are every networking.k8s.io/v1 NetworkPolicy.
	NetworkPolicies = Resource[*networkingv1.NetworkPolicy]
)

// CiliumNetworkPolicies are every cilium.io/v2 CiliumNetworkPolicy.
type CiliumNetworkPolicies interface {
	Resource[*unstructured.Unstructured]
}

// CiliumClusterwideNetworkPolicies are every cilium.io/v2
// CiliumClusterwideNetworkPolicy.
type CiliumClusterwideNetworkPolicies interface {
	Resource[*unstructured.Unstructured]
}

// The custom resources, cilium.io/v2.
var (
	CNPResource  = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumnetworkpolicies"}
	CCNPResource = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumclusterwidenetworkpolicies"}
)

// resourceParams are what every resource needs.
type resourceParams struct {
	cell.In

	Clientset Clientset
	Config    Config
	APIs      *apiRegistry
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

func typedListWatch(get func(Clientset) cache.Getter, plural string, modify func(*metav1.ListOptions)) func(Clientset) cache.ListerWatcher {
	return func(cs Clientset) cache.ListerWatcher {
		if modify == nil {
			modify = func(*metav1.ListOptions) {}
		}
		return cache.NewFilteredListWatchFromClient(get(cs), plural, metav1.NamespaceAll, modify)
	}
}

func coreV1(cs Clientset) cache.Getter { return cs.CoreV1() }

func newPods(p resourceParams, node localnode.Store) Pods {
	name := node.Get().Name
	return newResource[*corev1.Pod](resourceSpec{
		name: "core/v1::Pods", object: &corev1.Pod{},
		listWatch: typedListWatch(coreV1, "pods", func(o *metav1.ListOptions) {
			o.FieldSelector = "spec.nodeName=" + name
		}),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newNamespaces(p resourceParams) Namespaces {
	return newResource[*corev1.Namespace](resourceSpec{
		name: "core/v1::Namespace", object: &corev1.Namespace{}, listWatch: typedListWatch(coreV1, "namespaces", nil),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newNodes(p resourceParams) Nodes {
	return newResource[*corev1.Node](resourceSpec{
		name: "core/v1::Node", object: &corev1.Node{}, listWatch: typedListWatch(coreV1, "nodes", nil),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

// LabelServiceProxyName names the proxy that handles a Service
// (KEP-2447); a proxy without a name handles those without it. With
// corev1.IsHeadlessService it keeps a Service and its EndpointSlices
// (the EndpointSlice controller copies a Service's labels to its
// slices) from a service proxy.
const LabelServiceProxyName = "service.kubernetes.io/service-proxy-name"

// ServiceSelector is the label selector of the Services and
// EndpointSlices a proxy named proxyName handles, kube-proxy's and
// Cilium's: the service-proxy-name label absent (proxyName "") or
// proxyName, and no headless label.
func ServiceSelector(proxyName string) string {
	sel := "!" + LabelServiceProxyName
	if proxyName != "" {
		sel = LabelServiceProxyName + "=" + proxyName
	}
	return sel + ",!" + corev1.IsHeadlessService
}

// serviceLabels selects by ServiceSelector (the proxy name is a valid
// label value: Config.Validate).
func serviceLabels(c Config) func(*metav1.ListOptions) {
	sel := ServiceSelector(c.K8sServiceProxyName)
	return func(o *metav1.ListOptions) { o.LabelSelector = sel }
}

func newServices(p resourceParams) Services {
	return newResource[*corev1.Service](resourceSpec{
		name: "core/v1::Service", object: &corev1.Service{}, listWatch: typedListWatch(coreV1, "services", serviceLabels(p.Config)),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newEndpointSlices(p resourceParams) EndpointSlices {
	return newResource[*discoveryv1.EndpointSlice](resourceSpec{
		name: "discovery/v1::EndpointSlice", object: &discoveryv1.EndpointSlice{},
		listWatch: typedListWatch(func(cs Clientset) cache.Getter { return cs.DiscoveryV1() }, "endpointslices", serviceLabels(p.Config)),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newNetworkPolicies(p resourceParams) NetworkPolicies {
	return newResource[*networkingv1.NetworkPolicy](resourceSpec{
		name: "networking.k8s.io/v1::NetworkPolicy", object: &networkingv1.NetworkPolicy{},
		listWatch: typedListWatch(func(cs Clientset) cache.Getter { return cs.NetworkingV1() }, "networkpolicies", nil),
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newCiliumNetworkPolicies(p resourceParams) CiliumNetworkPolicies {
	return newResource[*unstructured.Unstructured](resourceSpec{
		name: "cilium/v2::CiliumNetworkPolicy", object: &unstructured.Unstructured{},
		listWatch: dynamicListWatch(CNPResource), crd: true,
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

func newCiliumClusterwideNetworkPolicies(p resourceParams) CiliumClusterwideNetworkPolicies {
	return newResource[*unstructured.Unstructured](resourceSpec{
		name: "cilium/v2::CiliumClusterwideNetworkPolicy", object: &unstructured.Unstructured{},
		listWatch: dynamicListWatch(CCNPResource), crd: true,
	}, p.Clientset, p.APIs, p.Lifecycle, p.Log)
}

// dynamicListWatch lists and watches a custom resource as unstructured
// objects.
func dynamicListWatch(gvr schema.GroupVersionResource) func(Clientset) cache.ListerWatcher {
	return func(cs Clientset) cache.ListerWatcher {
		ri := cs.Dynamic().Resource(gvr)
		return &cache.ListWatch{
			ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				return ri.List(ctx, o)
			},
			WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
				return ri.Watch(ctx, o)
			},
		}
	}
}
