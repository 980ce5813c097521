package lbmap

import (
	"math/rand/v2"
	"testing"
)

// TestBackendTable runs random sets and deletes, over ids near each
// other and far apart, against a map.
func TestBackendTable(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tab backendTable
	want := map[uint32]*backend{}
	for i := range 50000 {
		id := uint32(rng.IntN(3 * idPageSize))
		if rng.IntN(8) == 0 {
			id = maxBackendID - uint32(rng.IntN(idPageSize))
		}
		if be := want[id]; be != nil && rng.IntN(2) == 0 {
			tab.del(id)
			delete(want, id)
		} else if be == nil {
			be = &backend{id: id}
			tab.set(id, be)
			want[id] = be
		}
		if got := tab.get(id); got != want[id] {
			t.Fatalf("op %d: get(%d) = %p, want %p", i, id, got, want[id])
		}
	}
	if tab.len() != len(want) {
		t.Fatalf("len %d, want %d", tab.len(), len(want))
	}
	seen := 0
	for be := range tab.all {
		if want[be.id] != be {
			t.Fatalf("all yields %d, not in the table", be.id)
		}
		seen++
	}
	if seen != len(want) {
		t.Fatalf("all yields %d records, want %d", seen, len(want))
	}
	for id := range want {
		tab.del(id)
	}
	if tab.len() != 0 || len(tab.pages) > maxEmptyPages {
		t.Fatalf("emptied table: len %d, %d pages", tab.len(), len(tab.pages))
	}
}
