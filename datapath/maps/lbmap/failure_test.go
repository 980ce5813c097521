package lbmap_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// openSmall pins the load-balancing maps under a fresh root, those of
// sizes with that many entries (full maps make writes fail), and opens a
// writer on them.
func openSmall(t *testing.T, sizes map[string]uint32) (string, *lbmap.Writer, *lbmap.Maps) {
	t.Helper()
	root := bpfmaptest.Root(t)
	for _, name := range lbmap.MapNames {
		spec, err := lbmap.Spec(name, sizes[name])
		if err != nil {
			t.Fatal(err)
		}
		m, err := bpfmap.OpenOrCreate(slog.New(slog.NewTextHandler(io.Discard, nil)), spec, filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	w, m := open(t, root)
	return root, w, m
}

// TestFailedBackendWriteThenRetry: an upsert whose new backend does not
// fit in the backends map fails and leaves the service as it was; the
// next upserts (a revert, then the same change once there is room) write
// exactly what they ask, with nothing left behind.
func TestFailedBackendWriteThenRetry(t *testing.T) {
	root, w, m := openSmall(t, map[string]uint32{lbmap.Backends4Name: 4})
	abc := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80")
	abcd := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80")
	other := svc("10.96.0.2:80", "10.0.2.1:80")
	held := map[string]datapath.LBService{"10.96.0.1:80": abc, "10.96.0.2:80": other}
	for _, s := range []datapath.LBService{abc, other} {
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.UpsertService(abcd); err == nil {
		t.Fatal("upsert of a fifth backend into a backends map of 4 succeeded")
	}
	checkMaps(t, "after the failed upsert", root, m, held)
	if err := w.UpsertService(abc); err != nil {
		t.Fatalf("reverting: %v", err)
	}
	checkMaps(t, "after reverting", root, m, held)
	if err := w.UpsertService(abcd); err == nil {
		t.Fatal("second upsert of a fifth backend succeeded")
	}
	if err := w.DeleteService(other.Frontend); err != nil {
		t.Fatal(err)
	}
	delete(held, "10.96.0.2:80")
	// Room for one: .4 is written, .5 is not.
	abcde := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80", "10.0.1.5:80")
	if err := w.UpsertService(abcde); err == nil {
		t.Fatal("upsert of two new backends with room for one succeeded")
	}
	if err := w.UpsertService(abc); err != nil {
		t.Fatalf("reverting: %v", err)
	}
	checkMaps(t, "after reverting a half-written upsert", root, m, held)
	if err := w.UpsertService(abcd); err != nil {
		t.Fatalf("retrying once there is room: %v", err)
	}
	held["10.96.0.1:80"] = abcd
	checkMaps(t, "after the retry", root, m, held)
	abd := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.4:80")
	if err := w.UpsertService(abd); err != nil {
		t.Fatal(err)
	}
	held["10.96.0.1:80"] = abd
	checkMaps(t, "after removing one", root, m, held)
}

// TestFailedSlotWriteThenRetry: an upsert whose backend entry is written
// but whose new slot does not fit fails; the backend it wrote stays
// referenced: a revert deletes it; after the same failure, the next
// upsert (the new backend taking a freed slot instead) keeps it and
// deletes the one that left, and a later one deletes it.
func TestFailedSlotWriteThenRetry(t *testing.T) {
	root, w, m := openSmall(t, map[string]uint32{lbmap.Services4Name: 4})
	abc := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80")
	if err := w.UpsertService(abc); err != nil {
		t.Fatal(err)
	}
	abcd := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80")
	if err := w.UpsertService(abcd); err == nil {
		t.Fatal("upsert of a fourth slot into a services map of 4 entries succeeded")
	}
	if got := dump(t, m)["10.96.0.1:80/TCP"]; got.Count != 3 {
		t.Errorf("after the failed upsert: count %d, want 3 (the master entry not grown)", got.Count)
	}
	if err := w.UpsertService(abc); err != nil {
		t.Fatalf("reverting: %v", err)
	}
	checkMaps(t, "after reverting (the backend the failed upsert wrote deleted)", root, m, map[string]datapath.LBService{"10.96.0.1:80": abc})
	if err := w.UpsertService(abcd); err == nil {
		t.Fatal("second upsert of a fourth slot succeeded")
	}
	abd := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.4:80")
	if err := w.UpsertService(abd); err != nil {
		t.Fatalf("retrying with a freed slot: %v", err)
	}
	checkMaps(t, "after the retry", root, m, map[string]datapath.LBService{"10.96.0.1:80": abd})
	if got := slotAddrs(dump(t, m)["10.96.0.1:80/TCP"]); !slices.Equal(got, []string{"10.0.1.1:80", "10.0.1.2:80", "10.0.1.4:80"}) {
		t.Errorf("slots %v, want .4 in .3's slot", got)
	}
	ab := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80")
	if err := w.UpsertService(ab); err != nil {
		t.Fatal(err)
	}
	checkMaps(t, "after removing the retried backend", root, m, map[string]datapath.LBService{"10.96.0.1:80": ab})
}

// TestFailedSlotBatchPartlyWritten: an upsert adding three backends to
// a service whose map has room for two more entries writes the first
// two slots and fails on the third, before the master entry: the count
// stays. A revert deletes the slots and backends written; an upsert
// that asks for the two slots that fit then only grows the count.
func TestFailedSlotBatchPartlyWritten(t *testing.T) {
	root, w, m := openSmall(t, map[string]uint32{lbmap.Services4Name: 6})
	abc := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80")
	abcde := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80", "10.0.1.5:80")
	abcdef := svc("10.96.0.1:80", "10.0.1.1:80", "10.0.1.2:80", "10.0.1.3:80", "10.0.1.4:80", "10.0.1.5:80", "10.0.1.6:80")
	if err := w.UpsertService(abc); err != nil {
		t.Fatal(err)
	}
	err := w.UpsertService(abcdef)
	if err == nil {
		t.Fatal("upsert of six slots into a services map of 6 entries succeeded")
	}
	if !strings.Contains(err.Error(), "slot 6") {
		t.Errorf("error %q does not name slot 6", err)
	}
	got := dump(t, m)["10.96.0.1:80/TCP"]
	if got.Count != 3 || len(got.Slots) != 5 {
		t.Errorf("after the failed upsert: count %d with %d slots, want 3 with 5 (slots 4 and 5 written, the master not grown)", got.Count, len(got.Slots))
	}
	if err := w.UpsertService(abc); err != nil {
		t.Fatalf("reverting: %v", err)
	}
	checkMaps(t, "after reverting", root, m, map[string]datapath.LBService{"10.96.0.1:80": abc})
	if err := w.UpsertService(abcdef); err == nil {
		t.Fatal("second upsert of six slots succeeded")
	}
	if err := w.UpsertService(abcde); err != nil {
		t.Fatalf("upsert of the slots that fit: %v", err)
	}
	checkMaps(t, "after the slots that fit", root, m, map[string]datapath.LBService{"10.96.0.1:80": abcde})
	if err := w.UpsertService(abc); err != nil {
		t.Fatal(err)
	}
	checkMaps(t, "after shrinking back", root, m, map[string]datapath.LBService{"10.96.0.1:80": abc})
}
