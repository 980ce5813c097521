package ipcachemap_test

import (
	"encoding/binary"
	"io"
	"log/slog"
	"maps"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/policy/identity"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(ipcachemap.Key{}), binary.Size(bpf.LxcIpcacheKey{}); a != b {
		t.Errorf("Key is %d bytes, struct ipcache_key %d", a, b)
	}
	if a, b := binary.Size(ipcachemap.Value{}), binary.Size(bpf.LxcIpcacheValue{}); a != b {
		t.Errorf("Value is %d bytes, struct ipcache_value %d", a, b)
	}
}

func open(t *testing.T) *ipcachemap.Map {
	m, err := ipcachemap.Open(slog.New(slog.NewTextHandler(io.Discard, nil)), bpfmaptest.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestLookupLongestPrefix(t *testing.T) {
	m := open(t)
	if err := m.ApplyBatch([]datapath.IPCacheMapEntry{
		{Prefix: pfx("10.0.0.0/8"), Identity: 16777217}, {Prefix: pfx("10.1.2.3/32"), Identity: 1001},
		{Prefix: pfx("fd00::/64"), Identity: 16777218}, {Prefix: pfx("fd00::5/128"), Identity: 1002},
	}, nil); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		give   string
		want   identity.NumericIdentity
		wantOK bool
	}{
		{"10.1.2.3", 1001, true},
		{"10.9.9.9", 16777217, true},
		{"11.0.0.1", 0, false},
		{"fd00::5", 1002, true},
		{"fd00::6", 16777218, true},
		{"fd01::1", 0, false},
	}
	for _, tt := range tests {
		got, ok, err := m.Lookup(netip.MustParseAddr(tt.give))
		if err != nil || got != tt.want || ok != tt.wantOK {
			t.Errorf("Lookup(%s) = %d, %v, %v; want %d, %v", tt.give, got, ok, err, tt.want, tt.wantOK)
		}
	}
}

func TestApplyBatchRejectsBadPrefixWhole(t *testing.T) {
	m := open(t)
	err := m.ApplyBatch([]datapath.IPCacheMapEntry{{Prefix: pfx("10.0.0.1/32"), Identity: 1001}, {Identity: 1002}}, nil)
	if err == nil {
		t.Fatal("ApplyBatch with an invalid prefix succeeded")
	}
	if got, _ := m.Dump(); len(got) != 0 {
		t.Errorf("map holds %v after a rejected batch, want nothing", got)
	}
}

func TestReconcile(t *testing.T) {
	m := open(t)
	if err := m.ApplyBatch([]datapath.IPCacheMapEntry{
		{Prefix: pfx("10.0.0.1/32"), Identity: 1001},
		{Prefix: pfx("10.0.0.2/32"), Identity: 1002},
		{Prefix: pfx("10.0.0.3/32"), Identity: 1003},
		{Prefix: pfx("10.0.0.4/32"), Identity: 1004, TunnelPeer: netip.MustParseAddr("192.168.0.2")},
	}, []netip.Prefix{pfx("10.0.0.9/32")}); err != nil {
		t.Fatal(err)
	}
	desired := []datapath.IPCacheMapEntry{
		{Prefix: pfx("10.0.0.1/32"), Identity: 1001},                                             // unchanged
		{Prefix: pfx("10.0.0.2/32"), Identity: 2002},                                             // identity changed
		{Prefix: pfx("10.0.0.4/32"), Identity: 1004, TunnelPeer: netip.MustParseAddr("fd00::2")}, // tunnel peer changed
		{Prefix: pfx("fd00::1/128"), Identity: 1004, EncryptKey: 3},                              // new
	}
	up, del, err := m.Reconcile(desired)
	if err != nil {
		t.Fatal(err)
	}
	if up != 3 || del != 1 {
		t.Errorf("Reconcile wrote %d and deleted %d, want 3 and 1", up, del)
	}
	got, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[netip.Prefix]datapath.IPCacheMapEntry)
	for _, e := range desired {
		want[e.Prefix] = e
	}
	if !maps.Equal(got, want) {
		t.Errorf("map after Reconcile = %v, want %v", got, want)
	}
}

func TestApplyLastChangeOfAPrefixWins(t *testing.T) {
	m := open(t)
	p := pfx("10.0.0.1/32")
	err := m.Apply([]datapath.IPCacheMapChange{
		{Entry: datapath.IPCacheMapEntry{Prefix: p, Identity: 1}},
		{Entry: datapath.IPCacheMapEntry{Prefix: p}, Delete: true},
		{Entry: datapath.IPCacheMapEntry{Prefix: pfx("10.0.0.2/32"), Identity: 2}},
		{Entry: datapath.IPCacheMapEntry{Prefix: pfx("10.0.0.2/32"), Identity: 3}},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Dump()
	want := map[netip.Prefix]datapath.IPCacheMapEntry{pfx("10.0.0.2/32"): {Prefix: pfx("10.0.0.2/32"), Identity: 3}}
	if !maps.Equal(got, want) {
		t.Errorf("map after Apply = %v, want %v", got, want)
	}
}

// TestWritesBumpTheRevision: every write that may change the map bumps
// the ipcache revision in the config map; writes that change nothing do
// not.
func TestWritesBumpTheRevision(t *testing.T) {
	root := bpfmaptest.Root(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := ipcachemap.Open(log, root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	cfg, err := configmap.Open(log, root)
	if err != nil {
		t.Fatal(err)
	}
	defer cfg.Close()
	entries := []datapath.IPCacheMapEntry{{Prefix: pfx("10.0.0.1/32"), Identity: 1001}}
	steps := []struct {
		name  string
		write func() error
		bump  bool
	}{
		{"Upsert", func() error { return m.Upsert(pfx("10.0.0.2/32"), 1002) }, true},
		{"Delete", func() error { return m.Delete(pfx("10.0.0.2/32")) }, true},
		{"Delete of a missing prefix", func() error { return m.Delete(pfx("10.0.0.2/32")) }, false},
		{"ApplyBatch", func() error { return m.ApplyBatch(entries, nil) }, true},
		{"empty ApplyBatch", func() error { return m.ApplyBatch(nil, nil) }, false},
		{"Reconcile without a difference", func() error { _, _, err := m.Reconcile(entries); return err }, false},
		{"Reconcile with one", func() error { _, _, err := m.Reconcile(nil); return err }, true},
	}
	for _, s := range steps {
		before, err := cfg.IPCacheRevision()
		if err != nil {
			t.Fatal(err)
		}
		if err := s.write(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		after, err := cfg.IPCacheRevision()
		if err != nil {
			t.Fatal(err)
		}
		if bumped := after != before; bumped != s.bump {
			t.Errorf("%s: revision %d -> %d, want bumped %v", s.name, before, after, s.bump)
		}
	}
}
