// Command apiary-cni is the CNI plugin of apiary: container runtimes
// (kubelet through containerd or CRI-O, podman, nerdctl) run it to
// attach a container to the node's apiary-agent. See package
// github.com/apiary-net/apiary/cmd/apiary-cni/plugin.
//
// It is a thin client of the REST API: it may import the leaves and plain
// packages (policy/labels, cells/safefile), nothing that links etcd or
// go.uber.org/dig (docs/design.md, Layers).
package main
