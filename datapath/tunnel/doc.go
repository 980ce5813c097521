// Package tunnel holds the node's routing mode between nodes, Cilium's
// --routing-mode (native or tunnel), --tunnel-protocol (vxlan) and
// --tunnel-port (8472), and what follows from them: the name of the
// VXLAN device and the MTU the endpoints get under its header. The
// Linux datapath (datapath/linux) creates the device, the loader
// (datapath/loader) attaches the overlay program to it and gives the
// endpoint programs its ifindex, the endpoint cell sizes the veths, and
// the node-routes cell refuses --auto-direct-node-routes in tunnel mode
// (docs/datapath.md, Routing between nodes).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package tunnel
