// Package svcmanager is the service manager: it turns services, as their
// sources describe them, into the load-balancing frontends the datapath
// holds (datapath.LBService) and drives a datapath.LBMapWriter with the
// smallest set of writes.
//
// Sources hand it a Service each: Kubernetes Services with their
// EndpointSlices (FromKubernetes; clustermesh/service/k8ssvc's watcher,
// which joins the two, converts them with a Converter, which parses each
// object version once), the --lb-state-file of an agent
// without Kubernetes (same format as Cilium's), and the remote clusters'
// backends of global services (SetRemoteBackends, from ClusterMesh's
// service cache). Desired computes a service's frontends: ClusterIPs,
// NodePorts (the unspecified address and each node address), external
// IPs and LoadBalancer ingress IPs (restricted to the clients of the
// Service's loadBalancerSourceRanges), each with the backends of its port
// name, filtered by the traffic policies, merged with the remote
// backends per the global service's affinity, and with Kubernetes'
// terminating-endpoint fallback applied.
//
// The Manager keeps the desired frontends. Before its initial Reconcile
// (after every source's initial sync) it writes nothing; Reconcile hands
// the whole set to LBMapWriter.ReconcileServices, so a restarted agent
// never empties a service. After it, a change of one source object
// hands the writer the frontends of that service again, and the writer
// (which must write only what changed, and counts the calls that did:
// LBMapWriter.Changes) diffs them against what it wrote. The manager
// keeps no backend list, so an update reads no old one: Desired writes
// the lists into an arena the manager reuses, and Frontends computes
// them again for the API. Reconcile hands the writer one service's
// lists at a time (an iter.Seq), so the initial sync of a large cluster
// never holds every list at once.
//
// A change is meant to read little: the Converter keeps one record per
// Service object (the parsed Service, its frontends, its slices by
// name), found by the object itself; the Services it makes carry a ref
// that takes the manager that claimed it straight to the service's
// entry, which holds its first frontend; a frontend of this cluster's
// backends picks them in one pass. From a slice's second change on, a
// change allocates nothing: the manager gives the Service it replaces
// back to the ref, and the Converter makes the next Service and the
// changed slice's backends in it (never one that went to an observer,
// another manager or another source, nor backends a new version of the
// Service object took over from the one before). So a Service from a Converter, once upserted, is the
// manager's: its caller does not keep it past the next Convert of the
// same object.
//
// It sits in docs/design.md, Flow 5: services -> load-balancing maps. It
// may import packages of cells, kvstore, policy and datapath, nothing of
// clustermesh, cmd or hack (docs/design.md, Layers).
package svcmanager
