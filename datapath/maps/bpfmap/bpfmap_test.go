package bpfmap_test

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

func TestEnsureRootMountsBPFFS(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	root := filepath.Join(t.TempDir(), "apiary")
	if err := bpfmap.EnsureRoot(root); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(root, unix.MNT_DETACH) })
	if ok, err := bpfmap.IsBPFFS(root); err != nil || !ok {
		t.Fatalf("IsBPFFS(%s) = %v, %v after EnsureRoot", root, ok, err)
	}
	// A second call finds the bpffs and mounts nothing more.
	if err := bpfmap.EnsureRoot(root); err != nil {
		t.Fatal(err)
	}
}

func TestOpenOrCreateReusesOrReplaces(t *testing.T) {
	root := bpfmaptest.Root(t)
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	path := filepath.Join(root, "m")
	spec := &ebpf.MapSpec{Name: "m", Type: ebpf.Hash, KeySize: 4, ValueSize: 4, MaxEntries: 8}
	m, err := bpfmap.OpenOrCreate(log, spec, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Put(uint32(1), uint32(42)); err != nil {
		t.Fatal(err)
	}
	m.Close()

	m, err = bpfmap.OpenOrCreate(log, spec, path)
	if err != nil {
		t.Fatal(err)
	}
	var v uint32
	if err := m.Lookup(uint32(1), &v); err != nil || v != 42 {
		t.Errorf("reopened map: value %d, %v; want 42 (the pinned map reused)", v, err)
	}
	m.Close()
	if logs.Len() != 0 {
		t.Errorf("reuse logged %q", logs.String())
	}

	spec.ValueSize = 8
	m, err = bpfmap.OpenOrCreate(log, spec, path)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.ValueSize() != 8 {
		t.Errorf("value size %d after a layout change, want 8 (a new map)", m.ValueSize())
	}
	if !strings.Contains(logs.String(), "incompatible") {
		t.Errorf("replacing an incompatible map logged %q, want a line saying so", logs.String())
	}
}

func TestBatchDeleteSkipsMissingKeys(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	for _, typ := range []ebpf.MapType{ebpf.Hash, ebpf.LRUHash} {
		m, err := ebpf.NewMap(&ebpf.MapSpec{Type: typ, KeySize: 4, ValueSize: 4, MaxEntries: 16})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if n, err := bpfmap.BatchUpdate(m, []uint32{1, 2, 3}, []uint32{10, 20, 30}); err != nil || n != 3 {
			t.Fatalf("%v: BatchUpdate = %d, %v", typ, n, err)
		}
		n, err := bpfmap.BatchDelete(m, []uint32{1, 9, 3})
		if err != nil || n != 2 {
			t.Errorf("%v: BatchDelete = %d, %v; want 2 deleted", typ, n, err)
		}
		var v uint32
		if err := m.Lookup(uint32(2), &v); err != nil || v != 20 {
			t.Errorf("%v: key 2 = %d, %v after deleting others", typ, v, err)
		}
	}
}
