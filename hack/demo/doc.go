// Command demo turns an `apiary policy simulate` scenario into a lab on
// this machine and runs its queries as real connections: one etcd per
// cluster (TLS, client certificates of a lab CA), two nodes per cluster,
// each a network namespace with its own apiary-agent process, joined on
// one underlay bridge and meshed through the etcds; every scenario
// endpoint a pod namespace created through the endpoint API with a small
// server answering the scenario's ports; addresses that are no endpoint
// on an outside host. Each query is a TCP or UDP connection from the
// source's namespace; its verdict (PONG or timeout, and the monitor's
// drop line) is compared with simulate's on the same file.
//
// It is `make demo` (docs/demo.md). Subcommands used internally: `serve`
// (the pods' server), `nsexec` (exec a program in a namespace) and
// `etcd` (a cluster's etcd server, etcd's embed package).
// Everything is named with the prefix apiary-lab: network namespaces
// apiary-lab-*, the directory /run/apiary-lab and the bpffs directory
// /sys/fs/bpf/apiary-lab; a run sweeps leftovers first, and `demo down`
// (`make demo-down`) removes a lab kept with --keep.
//
// Imports: the API client and models, the CLI package, policy/labels and
// policy/simulate, netlink and netns, and an embedded etcd server; it
// drives the agents through their API, not their packages.
package main
