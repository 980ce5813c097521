package bpfmaptest

import (
	"errors"
	"os"
	"testing"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// Root returns a fresh bpffs root for t. It skips t, saying why, when the
// machine cannot load BPF maps or mount a bpffs (not root, no CAP_BPF).
func Root(t testing.TB) string {
	t.Helper()
	RequireBPF(t)
	dir := t.TempDir()
	if err := unix.Mount("bpffs", dir, "bpf", 0, "mode=0700"); err != nil {
		if errors.Is(err, unix.EPERM) {
			celltest.SkipUnprivileged(t, "mounting a bpffs needs CAP_SYS_ADMIN: %v", err)
		}
		t.Fatalf("mount bpffs: %v", err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount bpffs: %v", err)
		}
	})
	if ok, err := bpfmap.IsBPFFS(dir); err != nil || !ok {
		t.Fatalf("%s is not on a bpffs after mounting (err %v)", dir, err)
	}
	return dir
}

// RequireBPF skips t when BPF maps cannot be created here.
func RequireBPF(t testing.TB) {
	t.Helper()
	if err := rlimit.RemoveMemlock(); err != nil {
		celltest.SkipUnprivileged(t, "BPF unavailable: remove memlock limit: %v", err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	if errors.Is(err, unix.EPERM) || errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, os.ErrPermission) {
		celltest.SkipUnprivileged(t, "BPF unavailable on this machine (needs root/CAP_BPF): %v", err)
	}
	if err != nil {
		t.Fatalf("create a probe map: %v", err)
	}
	m.Close()
}
