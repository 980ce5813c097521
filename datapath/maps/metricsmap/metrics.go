package metricsmap

import (
	"fmt"
	"log/slog"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/policy"
)

// MapName is the map's name in the programs (and its pin name).
const MapName = "metrics"

// Value is struct metrics_value (one CPU's counters).
type Value struct {
	Packets uint64
	Bytes   uint64
}

// Index returns the map index of (reason, dir): reason << 1 | dir.
func Index(reason eventsmap.Reason, dir policy.Direction) uint32 {
	return uint32(reason)<<1 | uint32(dir&1)
}

// Metric is one (reason, direction) counter summed over CPUs.
type Metric struct {
	Reason    eventsmap.Reason
	Direction policy.Direction
	Packets   uint64
	Bytes     uint64
}

// Map is the metrics map.
type Map struct {
	m *ebpf.Map
}

// Open opens the metrics map pinned under root, creating it if missing.
func Open(log *slog.Logger, root string) (*Map, error) {
	m, err := bpfmap.OpenShared(log, root, MapName)
	if err != nil {
		return nil, err
	}
	return &Map{m: m}, nil
}

// Close releases the file descriptor.
func (m *Map) Close() error { return m.m.Close() }

// Read returns the non-zero counters, summed over CPUs, ordered by reason
// then direction.
func (m *Map) Read() ([]Metric, error) {
	var out []Metric
	var idx uint32
	var perCPU []Value
	it := m.m.Iterate()
	for it.Next(&idx, &perCPU) {
		var sum Metric
		for _, v := range perCPU {
			sum.Packets += v.Packets
			sum.Bytes += v.Bytes
		}
		if sum.Packets == 0 {
			continue
		}
		sum.Reason = eventsmap.Reason(idx >> 1)
		sum.Direction = policy.Direction(idx & 1)
		out = append(out, sum)
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("read metrics map: %w", err)
	}
	return out, nil
}

// EventsLost returns the number of event records the programs could not
// write because the events ring buffer was full (reason
// eventsmap.ReasonEventsLost, both directions).
func (m *Map) EventsLost() (uint64, error) {
	var n uint64
	for _, dir := range []policy.Direction{policy.Ingress, policy.Egress} {
		var perCPU []Value
		if err := m.m.Lookup(Index(eventsmap.ReasonEventsLost, dir), &perCPU); err != nil {
			return 0, fmt.Errorf("read lost events: %w", err)
		}
		for _, v := range perCPU {
			n += v.Packets
		}
	}
	return n, nil
}
