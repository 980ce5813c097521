package ctmap

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// Map names in the programs (and pin names).
const (
	MapName4 = "ct4"
	MapName6 = "ct6"
)

// Maps are the two conntrack maps.
type Maps struct {
	ct4, ct6 *ebpf.Map
}

// Open opens ct4 and ct6 pinned under root, creating them if missing.
func Open(log *slog.Logger, root string) (*Maps, error) {
	m4, err := bpfmap.OpenShared(log, root, MapName4)
	if err != nil {
		return nil, err
	}
	m6, err := bpfmap.OpenShared(log, root, MapName6)
	if err != nil {
		m4.Close()
		return nil, err
	}
	return &Maps{ct4: m4, ct6: m6}, nil
}

// Close releases both maps' file descriptors.
func (m *Maps) Close() error {
	return errors.Join(m.ct4.Close(), m.ct6.Close())
}

// Entry is one conntrack entry.
type Entry struct {
	Tuple Tuple
	Value Value
}

// Dump returns the entries of both maps.
func (m *Maps) Dump() ([]Entry, error) {
	var out []Entry
	var (
		k4 Key4
		k6 Key6
		v  Value
	)
	it := m.ct4.Iterate()
	for it.Next(&k4, &v) {
		out = append(out, Entry{Tuple: k4.Tuple(), Value: v})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("dump ct4: %w", err)
	}
	it = m.ct6.Iterate()
	for it.Next(&k6, &v) {
		out = append(out, Entry{Tuple: k6.Tuple(), Value: v})
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("dump ct6: %w", err)
	}
	return out, nil
}

// Now returns the programs' clock (CLOCK_MONOTONIC_COARSE, ns), which
// entry expiries are in.
func Now() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC_COARSE, &ts) // cannot fail for this clock
	return uint64(ts.Nano())
}
