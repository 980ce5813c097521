// Package lbmap is the Go side of the load-balancing maps of the endpoint
// programs (bpf/lib/lbmaps.h): services (frontend and backend slot ->
// service), backends (id -> address), reverse NAT (rev-NAT index ->
// frontend), ClientIP session affinity, source ranges
// (loadBalancerSourceRanges, srcrange.go); IPv4 and IPv6. Writer implements
// datapath.LBMapWriter over them: it allocates backend ids and rev-NAT
// indexes (the service id), keeps a backend that several services share
// once, writes only what changed and orders its writes so the programs
// never see a half-written service; it reads the pinned maps back when it
// opens, so a restarted agent keeps every id (established connections keep
// their backend). Dump reads them for `apiary bpf lb list`.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package lbmap
