package svcmanager_test

import (
	"iter"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// countingWriter is a writer that only counts: the benchmark then
// measures the control plane alone (hack/bench/cmd/svcbench times the
// same path with the BPF maps' writer, 10,000 services, against raw map
// writes, for the ratio).
type countingWriter struct{ upserts, deletes int }

func (w *countingWriter) UpsertService(datapath.LBService) error { w.upserts++; return nil }
func (w *countingWriter) DeleteService(datapath.L3n4Addr) error  { w.deletes++; return nil }
func (w *countingWriter) Changes() uint64                        { return uint64(w.upserts + w.deletes) }
func (w *countingWriter) ReconcileServices(s iter.Seq[datapath.LBService]) (int, int, error) {
	n := 0
	for range s {
		n++
	}
	return n, 0, nil
}

// BenchmarkSliceChange: an EndpointSlice change to the writer's call,
// against the same writes handed to the writer directly.
func BenchmarkSliceChange(b *testing.B) {
	b.Run("control-plane", func(b *testing.B) {
		w := &countingWriter{}
		svcmanagertest.SliceChange(b, w)
		if w.upserts < b.N {
			b.Fatalf("%d upserts for %d changes", w.upserts, b.N)
		}
	})
	b.Run("raw-write", func(b *testing.B) { svcmanagertest.RawWrite(b, &countingWriter{}) })
}

// BenchmarkSync: the initial sync of 1,000 services to the writer's
// ReconcileServices call.
func BenchmarkSync(b *testing.B) { svcmanagertest.Sync(b, &countingWriter{}) }
