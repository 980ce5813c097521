#!/usr/bin/env bash
# Compiles peer.c against the BPF sources of the cilium module pinned in
# hack/bench/go.mod, with the flags of Cilium's BPF test Makefile
# (pkg/datapath/loader.StandardCFlags, -mcpu=v3), into peer_bpfel.o.
set -euo pipefail
cd "$(dirname "$0")"
cc=${BPF_CLANG:-clang-19}
strip=${BPF_STRIP:-llvm-strip-19}
cilium=$(go list -m -f '{{.Dir}}' github.com/cilium/cilium)
"$cc" -I"$cilium/bpf/tests" -I"$cilium/bpf" -I"$cilium/bpf/include" -g \
	-O2 --target=bpf -std=gnu99 -nostdinc -ftrap-function=__undefined_trap \
	-Wall -Wextra -Werror -Wshadow -Wno-address-of-packed-member -Wno-unknown-warning-option \
	-Wno-gnu-variable-sized-type-not-at-end -Wimplicit-int-conversion -Wenum-conversion \
	-Wimplicit-fallthrough -mcpu=v3 -c peer.c -o peer_bpfel.o
"$strip" -g peer_bpfel.o
