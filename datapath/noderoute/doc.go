// Package noderoute routes to the pod CIDRs of the other nodes (native
// routing): a node handler, registered with the node manager, installs
// a route to each pod CIDR of every remote node via that node's IP of
// the CIDR's family, updates it when the node changes and removes it
// when the node goes. The routes are written through
// datapath.NodeRoutes (datapath/linux in the agent). In tunnel routing
// (--routing-mode=tunnel) the same handler runs without
// --auto-direct-node-routes, and datapath/linux routes the pod CIDRs
// through the tunnel device instead of via the node IPs.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package noderoute
