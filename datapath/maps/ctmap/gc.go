package ctmap

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// GCFilter selects extra entries to delete besides expired ones.
type GCFilter struct {
	// Keep, when set, is asked for each live entry; entries it returns
	// false for are deleted. After a restore it keeps the entries whose
	// endpoint address (Tuple.EndpointAddr) belongs to a restored
	// endpoint; to flush an endpoint it drops Value.EndpointID == id.
	Keep func(Entry) bool
}

// GCStats counts what a GC run did.
type GCStats struct {
	Alive    int // entries kept
	Expired  int // deleted because expired
	Orphaned int // deleted by the filter
}

// GC deletes the entries that expired at now (CLOCK_MONOTONIC_COARSE ns, see
// Now) and the live entries filter rejects, in both maps.
func (m *Maps) GC(now uint64, filter GCFilter) (GCStats, error) {
	var st GCStats
	keep := func(t Tuple, v Value) bool {
		switch {
		case v.Expires <= now:
			st.Expired++
			return false
		case filter.Keep != nil && !filter.Keep(Entry{Tuple: t, Value: v}):
			st.Orphaned++
			return false
		}
		st.Alive++
		return true
	}
	var dead4 []Key4
	var k4 Key4
	var v Value
	it := m.ct4.Iterate()
	for it.Next(&k4, &v) {
		if !keep(k4.Tuple(), v) {
			dead4 = append(dead4, k4)
		}
	}
	if err := it.Err(); err != nil {
		return st, fmt.Errorf("gc ct4: %w", err)
	}
	var dead6 []Key6
	var k6 Key6
	it = m.ct6.Iterate()
	for it.Next(&k6, &v) {
		if !keep(k6.Tuple(), v) {
			dead6 = append(dead6, k6)
		}
	}
	if err := it.Err(); err != nil {
		return st, fmt.Errorf("gc ct6: %w", err)
	}
	if _, err := bpfmap.BatchDelete(m.ct4, dead4); err != nil {
		return st, fmt.Errorf("gc ct4: %w", err)
	}
	if _, err := bpfmap.BatchDelete(m.ct6, dead6); err != nil {
		return st, fmt.Errorf("gc ct6: %w", err)
	}
	return st, nil
}

// Flush deletes every entry of both maps.
func (m *Maps) Flush() error {
	_, err := m.GC(^uint64(0), GCFilter{})
	return err
}

// EBPF returns the ct4 and ct6 maps (for the benchmark's flush and tests).
func (m *Maps) EBPF() (ct4, ct6 *ebpf.Map) { return m.ct4, m.ct6 }
