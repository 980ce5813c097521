// Package plugin is the CNI plugin apiary-cni (CNI spec 1.1, on
// github.com/containernetworking/cni's skel and types): ADD, DEL, CHECK,
// GC, VERSION and STATUS turn into calls of the agent's endpoint API on
// its unix socket (PUT, DELETE and GET /v1/endpoint/{id}, GET /v1/healthz).
//
// It is docs/design.md, Flow 3: pod -> endpoint -> identity, seen from
// the runtime: ADD asks the agent to
// create the endpoint in the container's network namespace (the agent
// allocates its addresses, creates the veth, allocates the identity of
// its labels and writes its policy), then returns the CNI result built
// from the endpoint and from what the namespace holds. The endpoint id
// is derived from the container id and interface name; the endpoint
// stores the container id so that ADD again, CHECK and DEL find it.
//
// Like the CLI it is a thin client: it links neither etcd nor dig.
//
// It is a thin client of the REST API: it may import the leaves and plain
// packages (policy/labels, cells/safefile), nothing that links etcd or
// go.uber.org/dig (docs/design.md, Layers).
package plugin
