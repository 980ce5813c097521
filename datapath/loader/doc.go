// Package loader loads apiary's endpoint programs (package bpf) once per
// endpoint, with the endpoint's constants rewritten and its pinned policy
// map given as a map replacement, and attaches them to the host side of
// the endpoint's veth with tcx: from_container on the tc ingress hook,
// to_container on the tc egress hook. Links are pinned under
// <bpf-root>/links/<endpoint-id>/{ingress,egress}, so programs stay
// attached while the agent is down; regeneration replaces the programs
// atomically through the pinned links; Restore reopens them after a
// restart. The shared maps (ipcache, ct4, ct6, frags, metrics, events and
// the load-balancing maps of datapath/maps/lbmap, sized by
// --bpf-lb-map-max) are pinned once under the root and reused across
// restarts.
//
// Two more program sets share those maps: the socket-level load balancer
// (bpf/sock.c, AttachSockLB: cgroup links pinned under
// <bpf-root>/links/sock) and the NodePort programs (bpf/netdev.c,
// AttachNodePort: tcx links pinned under <bpf-root>/links/netdev/<device>).
//
// tcx needs Linux >= 6.6; on older kernels the loader attaches tc clsact
// bpf filters through netlink instead (AttachMode).
//
// Attach and Load take the boundary's datapath.EndpointSpec as the
// endpoint manager builds it (the loader reads its ID, IfIndex, Identity
// and enforcement flags); loadercell adapts the rest of the Loader to the
// control plane's interfaces.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package loader
