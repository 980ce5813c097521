package endpointsmap

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// MapName is the map's name in the programs (and its pin name).
const MapName = "endpoints"

// Value is struct endpoint_state.
type Value struct {
	PolicyRev uint32
	Pad       uint32
}

// writeMu serialises the read-modify-writes of every Map in the process
// (the agent may hold several: one per writer), so that two writers never
// lose each other's change.
var writeMu sync.Mutex

// Map is the endpoints map.
type Map struct {
	m *ebpf.Map
}

// Open opens the endpoints map pinned under root, creating it if missing.
func Open(log *slog.Logger, root string) (*Map, error) {
	m, err := bpfmap.OpenShared(log, root, MapName)
	if err != nil {
		return nil, err
	}
	return New(m), nil
}

// New wraps an open endpoints map (the loader's shared one).
func New(m *ebpf.Map) *Map { return &Map{m: m} }

// Close releases the file descriptor.
func (m *Map) Close() error { return m.m.Close() }

// PolicyRevision returns endpoint id's policy revision.
func (m *Map) PolicyRevision(id uint16) (uint32, error) {
	var v Value
	if err := m.m.Lookup(uint32(id), &v); err != nil {
		return 0, fmt.Errorf("read policy revision of endpoint %d: %w", id, err)
	}
	return v.PolicyRev, nil
}

// BumpPolicyRevision increments endpoint id's policy revision and returns
// the new one. Call it after the write to the endpoint's policy map has
// completed: the programs read the revision before they look the policy
// up, so an entry recorded under the new revision saw the new map.
func (m *Map) BumpPolicyRevision(id uint16) (uint32, error) {
	writeMu.Lock()
	defer writeMu.Unlock()
	var v Value
	if err := m.m.Lookup(uint32(id), &v); err != nil {
		return 0, fmt.Errorf("bump policy revision of endpoint %d: %w", id, err)
	}
	v.PolicyRev++
	if err := m.m.Update(uint32(id), &v, ebpf.UpdateExist); err != nil {
		return 0, fmt.Errorf("bump policy revision of endpoint %d: %w", id, err)
	}
	return v.PolicyRev, nil
}
