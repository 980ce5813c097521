package identitycell_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestNumbersSurviveRestart: without a kvstore, an agent restarted with
// the same state dir gives every label set the number it had, whatever
// order the sets come in (endpoints restore in any order, and the BPF
// policy maps of an endpoint that cannot regenerate still hold the old
// numbers). A released set keeps its number while no other set took it.
func TestNumbersSurviveRestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	cfg := agentConfig{flags: []string{"state-dir=" + state}, extra: []cell.Cell{statedir.Cell}}
	sets := []labels.Labels{pod("a"), pod("b"), pod("c"), identity.CIDRLabels(mustPrefix("192.0.2.0/24")),
		identity.CIDRLabels(mustPrefix("2001:db8::/64"))}

	numbers := func(a *agent, order []int) map[int]identity.NumericIdentity {
		out := map[int]identity.NumericIdentity{}
		for _, i := range order {
			id, _, err := a.alloc.AllocateIdentity(context.Background(), sets[i])
			must(t, err)
			out[i] = id.ID
		}
		return out
	}
	first := newAgent(t, cfg)
	must(t, first.hive.Start(context.Background()))
	// A set allocated and released before the others: it keeps its number.
	gone, _, err := first.alloc.AllocateIdentity(context.Background(), pod("gone"))
	must(t, err)
	if _, err := first.alloc.Release(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	before := numbers(first, []int{0, 1, 2, 3, 4})
	must(t, first.hive.Stop(context.Background()))

	for round, order := range [][]int{{2, 1, 0, 4, 3}, {4, 0, 3, 2, 1}} {
		a := newAgent(t, cfg)
		must(t, a.hive.Start(context.Background()))
		after := numbers(a, order)
		for i := range sets {
			if after[i] != before[i] {
				t.Errorf("round %d: %s got %d, had %d before the restart", round, sets[i], after[i], before[i])
			}
		}
		again, _, err := a.alloc.AllocateIdentity(context.Background(), pod("gone"))
		must(t, err)
		if again.ID != gone.ID {
			t.Errorf("round %d: a released set got %d, had %d", round, again.ID, gone.ID)
		}
		must(t, a.hive.Stop(context.Background()))
	}
}

// TestBadJournalStopsTheAgent: a journal that cannot be read stops the
// start, naming the file and line, rather than handing out numbers that
// may mean another label set in the maps.
func TestBadJournalStopsTheAgent(t *testing.T) {
	state := t.TempDir()
	if err := os.WriteFile(filepath.Join(state, "identities-global.journal"), []byte("{\"id\":256,\"key\":\"k8s:app=a\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, agentConfig{flags: []string{"state-dir=" + state}, extra: []cell.Cell{statedir.Cell}})
	err := a.hive.Start(context.Background())
	if err == nil {
		a.hive.Stop(context.Background())
		t.Fatal("started with a corrupt identity journal")
	}
	if !strings.Contains(err.Error(), "identities-global.journal line 2") {
		t.Fatalf("error %v does not name the journal's line", err)
	}
}
