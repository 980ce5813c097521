// Package k8ssvc watches the Kubernetes Services and EndpointSlices once
// for two consumers: it hands every Service with its slices to the
// service manager (datapath/svcmanager, when the hive has one: the
// load-balancing frontends), and puts this cluster's global services in
// the global service cache (GET /v1/service, `apiary service list
// --clusters`) and publishes the shared ones for the remote clusters at
// Cilium's key layout.ServiceKey(cluster, namespace, name).
//
// A Service is global when it has the annotation
// service.cilium.io/global: "true" (or the old io.cilium/global-service);
// its local backends are shared unless service.cilium.io/shared (or
// io.cilium/shared-service) says otherwise (Cilium's rule: any value but
// "true" is not shared). Frontends are the ClusterIPs with the Service's
// ports; backends are the addresses of the ready endpoints of its
// EndpointSlices (label kubernetes.io/service-name) with the slices'
// ports.
//
// One agent writes, as in Cilium (where the operator or the
// clustermesh-apiserver, one elected writer, synchronises the services):
// the cluster's publisher (clustermesh/publish) runs a SyncStore for the
// length of its leadership, with its session lease, writes every shared
// global service, deletes the keys of services that are gone and then
// writes the services sync canary (clustermesh/service/svcpublish's
// Writer, which also publishes the services of --lb-state-file when the
// agent runs without Kubernetes).
//
// It may import packages of cells, kvstore, policy, datapath and
// clustermesh, nothing of cmd or hack (docs/design.md, Layers).
package k8ssvc
