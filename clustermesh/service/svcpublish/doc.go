// Package svcpublish publishes this cluster's global services for the
// remote clusters: Writer keeps the shared ones at Cilium's key
// layout.ServiceKey(cluster, namespace, name) while this agent is the
// cluster's elected publisher (clustermesh/publish), and Cell feeds it,
// without Kubernetes, from the service manager's sources (the
// --lb-state-file of the embedded agent and the demo lab).
//
// With Kubernetes the Kubernetes watcher (clustermesh/service/k8ssvc)
// feeds the Writer and the global service cache from the Services and
// EndpointSlices it watches, as Cilium's clustermesh-apiserver does;
// Cell then does nothing, so one writer owns the cluster's prefix.
// Without Kubernetes, Cell observes every service of the service manager
// (svcmanager.Manager.Observe): a global one (service.cilium.io/global)
// is put in the global service cache under this cluster's name
// (service.FromService: its ClusterIPs, its ready local backends), so
// `apiary service list` and the ClusterMesh status line count it, and a
// shared one is published. The Writer waits for the state file's first
// read before its first term, so it never deletes the key of a service
// the file still has, and writes the services sync canary after the
// services, which the publisher then leaves to it
// (publish.ServicesCanary).
//
// It sits in docs/design.md, Flow 5 (sources) and Flow 2 (writers). It
// may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package svcpublish
