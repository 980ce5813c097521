// Command apiary-cni is the CNI plugin of apiary: container runtimes
// (kubelet through containerd or CRI-O, podman, nerdctl) run it to
// attach a container to the node's apiary-agent. See package
// github.com/apiary-net/apiary/cmd/apiary-cni/plugin.
package main

import "github.com/apiary-net/apiary/cmd/apiary-cni/plugin"

func main() { plugin.Main() }
