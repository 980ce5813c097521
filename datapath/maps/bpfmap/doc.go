// Package bpfmap is the common ground of the datapath/maps/<name>
// packages and the loader: the map specs of the compiled programs (package
// bpf), the bpffs root (mounted when missing) and pinning of maps under it,
// and batch updates and deletes that fall back to one syscall per entry
// where the kernel has no batch operation for a map type.
//
// Pinned layout under the root (default /sys/fs/bpf/apiary):
//
//	<root>/ipcache, ct4, ct6, frags, metrics, events   shared maps, one per node
//	<root>/lb4_services, lb4_backends, ...       the load-balancing maps (datapath/maps/lbmap)
//	<root>/policy_<endpoint-id>                  one policy map per endpoint
//	<root>/links/<endpoint-id>/{ingress,egress}  tcx links (datapath/loader)
//	<root>/links/sock/<program>                  socket-level load balancer (cgroup links)
//	<root>/links/netdev/<device>/{ingress,egress} NodePort programs
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package bpfmap
