// Package netnsutil runs code in a Linux network namespace. The network
// namespace belongs to an OS thread, not to a goroutine or the process,
// so code that must work in another namespace (netlink calls, sockets,
// program attachment by ifindex) runs on a thread locked to it, and that
// thread must never go back to the runtime's pool while it is in the
// wrong namespace.
//
// Run and RunPath run a function on a thread of its own that is dropped
// afterwards, which is the safe default for the agent, the CNI plugin
// and the lab (hack/demo). RunOnCallingThread switches the caller's own
// thread and back, for test bodies that call t.Fatal. New and NewNamed
// create namespaces without moving the caller, and Enter moves the
// caller for good, before an exec.
//
// It imports nothing of apiary, so that the CNI plugin, which must link
// neither etcd nor the cell framework, can use it; the datapath, tests and
// hack/ use it too. It may import packages of cells, kvstore, policy and
// datapath and package bpf, nothing of clustermesh (docs/design.md,
// Layers).
package netnsutil
