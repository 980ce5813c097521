// Package k8s is the agent's Kubernetes client: a clientset cell
// (k8s.io/client-go REST clients of core/v1, discovery.k8s.io/v1 and
// networking.k8s.io/v1 on a scheme of those groups only, plus the dynamic
// client; not client-go's full clientset, which links every API group)
// configured from --k8s-kubeconfig-path,
// --k8s-api-server or the pod's service account, typed informer-backed
// resources that cells subscribe to as event streams, the cache-sync gate
// and the "Kubernetes" and "Kubernetes APIs" status lines.
//
// Without Kubernetes (no flag set, not in a pod) the cell is disabled: it
// says so in status, its resources deliver nothing and the gate is open;
// the agent runs standalone.
//
// Resources (Resource[T]) run one shared informer per type, started when
// the first cell subscribes, however many subscribe. Events delivers the
// objects of the cache as Upserts, then one Sync event, then every
// change. Pods are those of this node (spec.nodeName); CiliumNetworkPolicy
// and CiliumClusterwideNetworkPolicy come through the dynamic client as
// unstructured objects, which the policy decoder reads without Cilium's Go
// types.
//
// The watchers that turn objects into agent state live in their domain's
// layer and import this package: policy/k8spolicy (NetworkPolicy, CNP, CCNP),
// datapath/endpoint/k8spods (pod and namespace labels), and so on. Each
// registers its caches with the CacheSync gate (Register) when it is
// constructed; endpoint regeneration, identity GC, CT GC and the ipcache
// map reconcile wait for the gate (WaitForCacheSync) so that no policy is
// computed from a half-filled cache (docs/design.md, Flow 4: Kubernetes
// objects -> caches).
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package k8s
