package loader_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy"
)

// TestPolicyMapWriter drives the programs' verdict through the writer:
// a sync allows, an incremental change takes the allow back, an oversized
// state is refused whole, and deleting removes the pin.
func TestPolicyMapWriter(t *testing.T) {
	h := newHarness(t)
	l := h.loader
	allow80 := key(peerAID, policy.Egress, policy.ProtoTCP, 80, 16)
	if _, _, err := l.SyncPolicyMap(epID, policy.MapState{allow80: allow}); err != nil {
		t.Fatal(err)
	}
	progs, err := l.Load(loaderEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer progs.Close()
	p := tcp("10.0.0.7", "10.0.1.1", 40000, 80)
	if ret := run(t, progs.FromContainer, p); ret != actOK {
		t.Fatalf("after sync: verdict %d, want pass", ret)
	}

	if err := l.ApplyPolicyMapChanges(epID, policy.MapChanges{Deletes: []policy.Key{allow80}}); err != nil {
		t.Fatal(err)
	}
	if err := h.ct.Flush(); err != nil {
		t.Fatal(err)
	}
	if ret := run(t, progs.FromContainer, p); ret != actShot {
		t.Fatalf("after the incremental delete: verdict %d, want drop", ret)
	}

	big := make(policy.MapState)
	for i := range 1025 { // the harness's maps hold 1024
		big[key(peerAID, policy.Egress, policy.ProtoUDP, uint16(i), 16)] = allow
	}
	_, _, err = l.SyncPolicyMap(epID, big)
	var tooLarge *datapath.PolicyMapFullError
	if !errors.As(err, &tooLarge) || tooLarge.Keys != 1025 || tooLarge.Max != 1024 || !errors.Is(err, datapath.ErrPolicyMapFull) {
		t.Fatalf("oversized sync: %v, want a TooLargeError of 1025 keys, max 1024", err)
	}
	pm, err := l.PolicyMap(epID)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := pm.Dump()
	pm.Close()
	if err != nil || len(entries) != 0 {
		t.Errorf("map after the refused sync: %+v, %v; want the previous (empty) state", entries, err)
	}

	if err := l.DeletePolicyMap(epID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(h.root, policymap.PinName(epID))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("policy map pin after DeletePolicyMap: %v, want it gone", err)
	}
	if err := l.DeletePolicyMap(epID); err != nil {
		t.Errorf("second DeletePolicyMap: %v", err)
	}
}
