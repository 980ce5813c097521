// Package bpffloor is the floor program of cmd/bpfbench: parse, one LPM
// lookup, one hash lookup (floor.c, sharing bpf/lib/parse.h with apiary's
// programs), generated with bpf2go like package bpf (`make generate`).
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package bpffloor

//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpffloor -output-stem floor Floor floor.c -- -O2 -mcpu=v3 -g -Wall -Werror -I../../../bpf/lib -I/usr/include/x86_64-linux-gnu
