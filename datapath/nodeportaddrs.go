package datapath

import "net/netip"

// NodePortAddrs are the node addresses NodePort frontends are served on
// besides the node's own (its Kubernetes addresses): those of the node's
// external devices (--devices, --nodeport-addresses), which a client from
// outside may reach it by. The loader cell provides one with
// --enable-node-port.
type NodePortAddrs interface {
	// Addrs returns the NodePort addresses, sorted, given the node's
	// own: those and the devices' chosen ones, all within
	// --nodeport-addresses when it is set.
	Addrs(node []netip.Addr) []netip.Addr
	// Subscribe calls fn after the devices' addresses changed, from
	// another goroutine; it returns the function that stops it.
	Subscribe(fn func()) (unsubscribe func())
}
