package k8s

import "github.com/apiary-net/apiary/cells/cell"

// Cell is the Kubernetes client: the Clientset, the typed resources
// (Pods of this node, Namespaces, Nodes, Services, EndpointSlices,
// NetworkPolicies, CiliumNetworkPolicies,
// CiliumClusterwideNetworkPolicies, CiliumIdentities, CiliumEndpoints),
// the CacheSync gate and the
// "Kubernetes" and "Kubernetes APIs" status lines. It needs the
// local-node cell (the node's name selects its pods).
var Cell = cell.Module("k8s-client", "Kubernetes client, typed resources and the cache-sync gate",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newAPIRegistry),
	cell.Provide(
		newClientset,
		newGate,
		newStatusProviders,
		newPods,
		newNamespaces,
		newNodes,
		newServices,
		newEndpointSlices,
		newNetworkPolicies,
		newCiliumNetworkPolicies,
		newCiliumClusterwideNetworkPolicies,
		newCiliumIdentities,
		newCiliumEndpoints,
	),
)
