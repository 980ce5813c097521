package ctgc_test

import (
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/ctgc"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/policy"
)

// TestCell starts the collector alone with the loader on a private
// bpffs holding entries a previous agent left: its first run, at start,
// deletes the expired one and keeps the live ones (without an endpoint
// manager there is no orphan pass).
func TestCell(t *testing.T) {
	root := bpfmaptest.Root(t)
	m, err := ctmap.Open(celltest.Logger(t), root)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	put(t, m, "10.0.1.2", "10.0.2.9", policy.Egress, ctmap.Now()+3600e9)
	put(t, m, "10.0.1.3", "10.0.2.9", policy.Egress, ctmap.Now()+3600e9)
	put(t, m, "10.0.1.2", "10.0.2.8", policy.Egress, 1)
	celltest.StartWithFlags(t, []string{"bpf-root=" + root, "conntrack-gc-interval=1h"}, loadercell.Cell, ctgc.Cell)
	celltest.Eventually(t, "the expired entry deleted at start", func() bool { return count(t, m) == 2 })
}
