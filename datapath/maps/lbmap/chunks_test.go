package lbmap_test

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// TestReconcileInChunksEqualsUpserts: a reconcile into empty maps with
// more backends, slots and master entries than one batch write takes
// (they go in chunks) writes what one UpsertService per service writes,
// IPv4 and IPv6 mixed, some backends shared, some terminating.
func TestReconcileInChunksEqualsUpserts(t *testing.T) {
	const services = 4500 // more master entries than a chunk
	var svcs []datapath.LBService
	for i := range services {
		var backends []string
		for j := range 2 {
			k := (i*2 + j) % 8200 // the last services share their backends with the first
			b := fmt.Sprintf("10.%d.%d.%d:8080", 1+k>>16, k>>8&0xff, k&0xff)
			if (i+j)%7 == 0 {
				b = "~" + b
			}
			backends = append(backends, b)
		}
		fe := fmt.Sprintf("10.96.%d.%d:80", i>>8, i&0xff)
		if i%500 == 0 {
			fe = fmt.Sprintf("[fd00::%x]:80", i)
			backends = []string{fmt.Sprintf("[fd00::1:%x]:8080", i), fmt.Sprintf("[fd00::2:%x]:8080", i)}
		}
		svcs = append(svcs, svc(fe, backends...))
	}
	bulkW, bulkM := open(t, bpfmaptest.Root(t))
	added, removed, err := bulkW.ReconcileServices(slices.Values(svcs))
	if err != nil || added != services || removed != 0 {
		t.Fatalf("ReconcileServices from empty = %d, %d, %v; want %d added", added, removed, err, services)
	}
	oneM := upsertEach(t, svcs)
	shape := func(m *lbmap.Maps) map[string]string {
		out := map[string]string{}
		for fe, s := range dump(t, m) {
			states := map[string]datapath.BackendState{}
			for _, sl := range s.Slots {
				states[sl.Backend.String()] = sl.State
			}
			out[fe] = fmt.Sprintf("count=%d slots=%v states=%v", s.Count, slotAddrs(s), states)
		}
		return out
	}
	a, b := shape(bulkM), shape(oneM)
	if len(a) != services || !reflect.DeepEqual(a, b) {
		t.Errorf("batched reconcile wrote %d frontends, one upsert per service %d; they differ: %v",
			len(a), len(b), !reflect.DeepEqual(a, b))
		for fe := range b {
			if a[fe] != b[fe] {
				t.Errorf("%s: batched %s, upserts %s", fe, a[fe], b[fe])
				break
			}
		}
	}
	if n, want := countBackends(t, bulkM), countBackends(t, oneM); n != want || n <= 4096 {
		t.Errorf("%d backends after the batched reconcile, %d after upserts; want equal, above a chunk", n, want)
	}
	if f, n := bulkW.Stats(); f != services || n != countBackends(t, bulkM) {
		t.Errorf("Stats = %d frontends, %d backends; want %d, %d", f, n, services, countBackends(t, bulkM))
	}
}
