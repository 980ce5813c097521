// Package bpf holds the C sources of apiary's eBPF programs — the
// endpoint programs (lxc.c and lib/*.h, services translated by lib/lb.h),
// the socket-level load balancer (sock.c), its socket terminator
// (sockterm.c) and the NodePort programs
// (netdev.c) — and the Go code and objects bpf2go generated from them
// (<name>_bpfel.go, <name>_bpfel.o; little-endian only, the targets are
// x86-64 and arm64). The generated files are committed so `go build` never
// needs clang; `make bpf` regenerates them with clang-19 and records the
// sources' sha256 and the compiler in sources.lock, which a test checks;
// another compiles the sources again and compares the objects byte for
// byte (make test installs clang-19 for it).
//
// datapath/maps/<name> give typed access to the maps; datapath/loader
// loads the collection per endpoint and attaches it. See docs/datapath.md.
//
// It may import only the standard library and third-party modules
// (cilium/ebpf); only the datapath imports it (docs/design.md, Layers).
package bpf

//go:generate go run ./internal/sctpcrc/gen
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpf -output-stem lxc -type ipcache_key -type ipcache_value -type policy_key -type policy_value -type ct4_key -type ct6_key -type ct_value -type endpoint_state -type config_value -type metrics_value -type lb4_key -type lb6_key -type lb_service -type lb4_backend -type lb6_backend -type lb4_rev_nat -type lb6_rev_nat -type lb_affinity_key -type lb_affinity_value -type lb_affinity_match_key -type snat_key -type snat_value -type lb4_src_range_key -type lb6_src_range_key Lxc lxc.c -- -O2 -mcpu=v3 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpf -output-stem overlay Overlay overlay.c -- -O2 -mcpu=v3 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpf -output-stem sock -type lb_sk_key -type lb_sk_value Sock sock.c -- -O2 -mcpu=v3 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpf -output-stem sockterm SockTerm sockterm.c -- -O2 -mcpu=v3 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc ${BPF_CLANG} -strip ${BPF_STRIP} -target bpfel -go-package bpf -output-stem netdev Netdev netdev.c -- -O2 -mcpu=v3 -g -Wall -Werror -I/usr/include/x86_64-linux-gnu
//go:generate go run ./internal/srchash/gen
