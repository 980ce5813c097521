// Package svcmanagercell runs the service manager (datapath/svcmanager)
// in the agent: it provides the *svcmanager.Manager that the Kubernetes
// service watcher (clustermesh/service/k8ssvc) and ClusterMesh's global
// service cache (clustermesh/clustermeshcell) feed, reads --lb-state-file
// (Cilium's flag and format) for agents without Kubernetes, hands every
// frontend to the datapath's LBMapWriter once all sources synced, retries
// failed writes and adds the "Services" status line.
//
// The writer is an optional dependency: without one in the hive the
// manager still computes the frontends (GET /v1/service, `apiary service
// list`) and writes nothing.
//
// It may import packages of cells, kvstore, policy and datapath, nothing
// of clustermesh, cmd or hack (docs/design.md, Layers).
package svcmanagercell
