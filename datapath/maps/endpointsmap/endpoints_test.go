package endpointsmap_test

import (
	"encoding/binary"
	"io"
	"log/slog"
	"testing"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/endpointsmap"
)

func TestLayoutMatchesPrograms(t *testing.T) {
	if a, b := binary.Size(endpointsmap.Value{}), binary.Size(bpf.LxcEndpointState{}); a != b {
		t.Errorf("Value is %d bytes, struct endpoint_state %d", a, b)
	}
}

// TestBumpPolicyRevision: revisions start at 0, count per endpoint and
// survive reopening the pinned map. (The programs' use of them is tested
// in datapath/loader.)
func TestBumpPolicyRevision(t *testing.T) {
	root := bpfmaptest.Root(t)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m, err := endpointsmap.Open(log, root)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []uint32{1, 2} {
		if got, err := m.BumpPolicyRevision(7); err != nil || got != want {
			t.Fatalf("bump %d: %d, %v; want %d", i, got, err, want)
		}
	}
	if got, err := m.PolicyRevision(8); err != nil || got != 0 {
		t.Errorf("endpoint 8: %d, %v; want 0", got, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if m, err = endpointsmap.Open(log, root); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got, err := m.PolicyRevision(7); err != nil || got != 2 {
		t.Errorf("endpoint 7 after reopening: %d, %v; want 2", got, err)
	}
}
