// Package datapath is the boundary between the control plane and the
// kernel: the interfaces the endpoint manager, the node manager's
// handlers and the policy engine's consumers call to plumb endpoints
// (EndpointLinks), route to other nodes (NodeRoutes), load and attach
// the endpoint programs (Loader) and fill the BPF maps (PolicyMapWriter,
// IPCacheMapWriter, LBMapWriter: services, datapath/maps/lbmap).
//
// It holds plain types only: no Linux, netlink or cilium/ebpf imports.
// The implementations live in datapath/linux (links, routes, sysctls)
// and datapath/loader with datapath/maps/... (programs and maps); the
// control plane never imports those. datapath/datapathtest is a fake of
// every interface for unit tests, recording the calls.
//
// In docs/design.md, Flow 3: pod -> endpoint -> identity, the endpoint
// manager calls, in
// order: EndpointLinks.CreateEndpointLink (veth pair and addresses), the identity
// allocator and the ipcache, PolicyMapWriter.SyncPolicyMap with the endpoint's
// map state, then Loader.Attach.
//
// It may import the policy engine's types (policy, policy/identity) and
// the leaves, nothing of Linux, netlink, cilium/ebpf or a later layer
// (docs/design.md, Layers).
//
// The implementations take its types as they are:
// datapath/maps/ipcachemap writes IPCacheMapEntry and IPCacheMapChange,
// datapath/loader loads an EndpointSpec, so no mirror types sit between
// the control plane and the kernel.
package datapath
