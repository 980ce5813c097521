package lbmap_test

import (
	"fmt"
	"iter"
	"reflect"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// reusing yields svcs as svcmanager's reconcile does: every list in one
// buffer, overwritten with garbage once the next service is asked for,
// so that a writer that keeps a yielded list instead of copying it
// writes or keeps the wrong backends. It counts how often it is ranged.
func reusing(svcs []datapath.LBService, ranged *int) iter.Seq[datapath.LBService] {
	return func(yield func(datapath.LBService) bool) {
		*ranged++
		var buf []datapath.LBBackend
		for _, s := range svcs {
			for i := range buf {
				buf[i] = datapath.LBBackend{Addr: l3n4("192.0.2.99:9", datapath.ProtoTCP), State: datapath.BackendQuarantined}
			}
			buf = append(buf[:0], s.Backends...)
			s.Backends = buf
			if !yield(s) {
				return
			}
		}
	}
}

// TestReconcileStream: a reconcile whose services come one list at a
// time, from one reused buffer, ranged as often as the writer likes,
// writes what one upsert per service writes, from empty maps and over
// maps holding some of the frontends (with other backends) and a stale
// one.
func TestReconcileStream(t *testing.T) {
	var svcs []datapath.LBService
	for i := range 40 {
		var bes []string
		for j := range 1 + i%7 {
			bes = append(bes, fmt.Sprintf("10.0.%d.%d:8080", i, j+1))
		}
		if i%5 == 0 {
			bes = append(bes, "10.0.200.1:8080") // shared
		}
		svcs = append(svcs, svc(fmt.Sprintf("10.96.0.%d:80", i+1), bes...))
	}
	shape := func(m *lbmap.Maps) map[string]string {
		out := map[string]string{}
		for fe, s := range dump(t, m) {
			out[fe] = fmt.Sprintf("count=%d slots=%v", s.Count, slotAddrs(s))
		}
		return out
	}
	oneM := upsertEach(t, svcs)
	want := shape(oneM)

	for _, before := range []string{"empty maps", "maps holding some of them and a stale one"} {
		w, m := open(t, bpfmaptest.Root(t))
		stale := 0
		if before != "empty maps" {
			for i, s := range svcs[:25] {
				if i%2 == 0 {
					s.Backends = s.Backends[:1]
				}
				if err := w.UpsertService(s); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.UpsertService(svc("10.96.1.1:80", "10.0.201.1:8080")); err != nil {
				t.Fatal(err)
			}
			stale = 1
		}
		ranged := 0
		added, removed, err := w.ReconcileServices(reusing(slices.Clone(svcs), &ranged))
		if err != nil || removed != stale {
			t.Fatalf("%s: ReconcileServices = %d added, %d removed, %v; want %d removed", before, added, removed, err, stale)
		}
		if got := shape(m); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the stream wrote\n%v\none upsert per service wrote\n%v", before, got, want)
		}
		if n, wantN := countBackends(t, m), countBackends(t, oneM); n != wantN {
			t.Errorf("%s: %d backends, want %d", before, n, wantN)
		}
		t.Logf("%s: ranged %d times", before, ranged)
	}
}
