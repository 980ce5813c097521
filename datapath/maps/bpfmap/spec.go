package bpfmap

import (
	"fmt"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/bpf"
)

// DefaultRoot is the default bpffs directory maps and links are pinned in.
const DefaultRoot = "/sys/fs/bpf/apiary"

var lxcSpec = sync.OnceValues(bpf.LoadLxc)

// CollectionSpec returns a copy of the endpoint programs' collection spec.
func CollectionSpec() (*ebpf.CollectionSpec, error) {
	spec, err := lxcSpec()
	if err != nil {
		return nil, fmt.Errorf("load endpoint program spec: %w", err)
	}
	return spec.Copy(), nil
}

// MapSpec returns a copy of the spec of the programs' map name.
func MapSpec(name string) (*ebpf.MapSpec, error) {
	spec, err := lxcSpec()
	if err != nil {
		return nil, fmt.Errorf("load endpoint program spec: %w", err)
	}
	ms, ok := spec.Maps[name]
	if !ok {
		return nil, fmt.Errorf("look up map spec %q: not in the endpoint programs", name)
	}
	return ms.Copy(), nil
}
