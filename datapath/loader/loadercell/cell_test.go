package loadercell_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/policy"
)

// TestCellPinsSharedMaps starts the cell alone on a private bpffs and
// checks the shared maps are pinned, and that a second start reuses them.
func TestCellPinsSharedMaps(t *testing.T) {
	root := bpfmaptest.Root(t)
	var (
		l     *loader.Loader
		limit policy.MapStateLimit
	)
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "bpf-policy-map-max=64"}, loadercell.Cell,
		celltest.Capture(&l), celltest.Capture(&limit))
	if l.Root() != root {
		t.Errorf("loader root %q, want %q", l.Root(), root)
	}
	for _, name := range []string{"ipcache", "ct4", "ct6", "metrics", "events"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Errorf("shared map %s not pinned: %v", name, err)
		}
	}
	pm, err := l.PolicyMap(3)
	if err != nil {
		t.Fatal(err)
	}
	defer pm.Close()
	if got := pm.EBPF().MaxEntries(); got != 64 {
		t.Errorf("policy map holds %d entries, want --bpf-policy-map-max=64", got)
	}
	if limit != 64 {
		t.Errorf("the cell provides a map state limit of %d, want --bpf-policy-map-max=64", limit)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		give loadercell.Config
		ok   bool
	}{
		{"defaults", loadercell.DefaultConfig, true},
		{"tc mode", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "tc", BPFPolicyMapMax: 1}, true},
		{"empty root", loadercell.Config{BPFAttachMode: "auto", BPFPolicyMapMax: 1}, false},
		{"unknown attach mode", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "xdp", BPFPolicyMapMax: 1}, false},
		{"no policy map", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto"}, false},
		{"largest policy map", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1 << 20}, true},
		{"policy map too large", loadercell.Config{BPFRoot: "/sys/fs/bpf/x", BPFAttachMode: "auto", BPFPolicyMapMax: 1<<20 + 1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.give.Validate(); (err == nil) != tt.ok {
				t.Errorf("Validate() = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
