package bpf_test

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/bpf/internal/srchash"
	"github.com/apiary-net/apiary/cells/celltest"
)

// TestSourcesMatchObjects fails when a C source changed after the
// committed objects were generated: run `make bpf`.
func TestSourcesMatchObjects(t *testing.T) {
	text, err := os.ReadFile(srchash.LockFile)
	if err != nil {
		t.Fatal(err)
	}
	lock, err := srchash.Parse(string(text))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := srchash.Sum(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	if sum != lock.SHA256 {
		t.Fatalf("C sources hash to %s but the objects were generated from %s (%s): run `make bpf`", sum, lock.SHA256, lock.Clang)
	}
	objects, err := srchash.ObjectSums(os.DirFS("."))
	if err != nil {
		t.Fatal(err)
	}
	if len(objects) == 0 || len(lock.Objects) != len(objects) {
		t.Fatalf("committed objects %v, %s lists %v: run `make bpf`", objects, srchash.LockFile, lock.Objects)
	}
	for name, sum := range objects {
		if lock.Objects[name] != sum {
			t.Errorf("committed %s hashes to %s, but `make bpf` generated %s from these sources: run `make bpf`",
				name, sum, lock.Objects[name])
		}
	}
}

// TestLoad loads both programs through the kernel verifier.
func TestLoad(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	var objs bpf.LxcObjects
	err := bpf.LoadLxcObjects(&objs, nil)
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		t.Fatalf("verifier: %+v", ve)
	}
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission) {
		celltest.SkipUnprivileged(t, "BPF unavailable on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer objs.Close()
	for _, p := range []*ebpf.Program{objs.FromContainer, objs.ToContainer} {
		if p.Type() != ebpf.SchedCLS {
			t.Errorf("program type %s, want SchedCLS", p.Type())
		}
	}
}

// TestLoadTunnel loads the endpoint programs with tunnel routing on (the
// encapsulation code is dead, and unverified, when tunnel_ifindex is 0)
// and the overlay programs, through the verifier.
func TestLoadTunnel(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	spec, err := bpf.LoadLxc()
	if err != nil {
		t.Fatal(err)
	}
	if err := spec.Variables[bpf.LxcVarTunnelIfindex].Set(uint32(1)); err != nil {
		t.Fatal(err)
	}
	var objs bpf.LxcObjects
	err = spec.LoadAndAssign(&objs, nil)
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		t.Fatalf("verifier: %+v", ve)
	}
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission) {
		celltest.SkipUnprivileged(t, "BPF unavailable on this machine: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	objs.Close()
	var overlay bpf.OverlayObjects
	if err := bpf.LoadOverlayObjects(&overlay, nil); err != nil {
		if errors.As(err, &ve) {
			t.Fatalf("verifier: %+v", ve)
		}
		t.Fatal(err)
	}
	defer overlay.Close()
	for _, p := range []*ebpf.Program{overlay.FromOverlay, overlay.ToOverlay} {
		if p.Type() != ebpf.SchedCLS {
			t.Errorf("program type %s, want SchedCLS", p.Type())
		}
	}
}

// TestLoadSockAndNetdev loads the socket-level load balancer and the
// NodePort programs through the kernel verifier.
func TestLoadSockAndNetdev(t *testing.T) {
	if err := rlimit.RemoveMemlock(); err != nil {
		t.Fatal(err)
	}
	var sock bpf.SockObjects
	err := bpf.LoadSockObjects(&sock, nil)
	if errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission) {
		celltest.SkipUnprivileged(t, "BPF unavailable on this machine: %v", err)
	}
	var ve *ebpf.VerifierError
	if errors.As(err, &ve) {
		t.Fatalf("verifier (sock): %+v", ve)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	if typ := sock.SockConnect4.Type(); typ != ebpf.CGroupSockAddr {
		t.Errorf("sock_connect4 is a %s program, want CGroupSockAddr", typ)
	}
	var netdev bpf.NetdevObjects
	err = bpf.LoadNetdevObjects(&netdev, nil)
	if errors.As(err, &ve) {
		t.Fatalf("verifier (netdev): %+v", ve)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer netdev.Close()
	for _, p := range []*ebpf.Program{netdev.FromNetdev, netdev.ToNetdev} {
		if p.Type() != ebpf.SchedCLS {
			t.Errorf("program type %s, want SchedCLS", p.Type())
		}
	}
}
