// Package ciliumlxc embeds Cilium's cil_from_container (bpf_lxc.c of the
// cilium module, v1.20.x, in hack/bench/go.mod) compiled inside Cilium's
// BPF test framework (peer.c), the peer of cmd/bpfbench. build.sh
// compiles it with clang-19 (`make generate`); the object is committed.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package ciliumlxc

import (
	"bytes"
	_ "embed"
	"fmt"

	"github.com/cilium/ebpf"
)

//go:generate ./build.sh

//go:embed peer_bpfel.o
var object []byte

// Spec returns the collection spec of the compiled peer.
func Spec() (*ebpf.CollectionSpec, error) {
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(object))
	if err != nil {
		return nil, fmt.Errorf("load cilium peer spec: %w", err)
	}
	return spec, nil
}
