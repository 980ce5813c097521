package policymap

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/policy"
)

// SpecName is the policy map's name in the programs.
const SpecName = "policy"

// DefaultMaxEntries is the default of --bpf-policy-map-max.
const DefaultMaxEntries = 16384

// fullError is the error of Sync and Apply for a map state that does
// not fit the map: nothing was written. It is the boundary's
// *datapath.PolicyMapFullError (errors.Is datapath.ErrPolicyMapFull).
func (m *Map) fullError(keys int) error {
	return &datapath.PolicyMapFullError{ID: datapath.EndpointID(m.epID), Keys: keys, Max: int(m.m.MaxEntries())}
}

// PinName returns the pin name of endpoint epID's policy map.
func PinName(epID uint16) string { return fmt.Sprintf("policy_%d", epID) }

// Map is one endpoint's policy map.
type Map struct {
	mu     sync.Mutex // serialises Sync and Apply
	m      *ebpf.Map
	epID   uint16
	path   string
	shadow *shadow // what the agent last wrote; nil until a Sync
}

// Open opens endpoint epID's policy map pinned under root, creating and
// pinning it (with maxEntries entries) when missing or when the pinned
// one has another size or layout.
func Open(log *slog.Logger, root string, epID uint16, maxEntries uint32) (*Map, error) {
	spec, err := bpfmap.MapSpec(SpecName)
	if err != nil {
		return nil, err
	}
	if maxEntries == 0 {
		return nil, fmt.Errorf("open policy map: --bpf-policy-map-max must be positive")
	}
	spec.Name = PinName(epID)
	spec.MaxEntries = maxEntries
	path := filepath.Join(root, PinName(epID))
	m, err := bpfmap.OpenOrCreate(log, spec, path)
	if err != nil {
		return nil, fmt.Errorf("open policy map of endpoint %d: %w", epID, err)
	}
	return &Map{m: m, epID: epID, path: path}, nil
}

// Remove unpins endpoint epID's policy map (programs still using it keep
// it alive until they are detached). A missing pin is not an error.
func Remove(root string, epID uint16) error {
	err := os.Remove(filepath.Join(root, PinName(epID)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove policy map of endpoint %d: %w", epID, err)
	}
	return nil
}

// EBPF returns the underlying map, for the loader's map replacement.
func (m *Map) EBPF() *ebpf.Map { return m.m }

// Close releases the file descriptor; the pin stays.
func (m *Map) Close() error { return m.m.Close() }

// DumpEntry is one entry of the map as `apiary bpf policy get` shows it.
type DumpEntry struct {
	Key     policy.Key
	Deny    bool
	Packets uint64
	Bytes   uint64
}

// Dump returns the map's entries with their counters.
func (m *Map) Dump() ([]DumpEntry, error) {
	raw, err := m.dumpRaw()
	if err != nil {
		return nil, err
	}
	out := make([]DumpEntry, 0, len(raw))
	for k, v := range raw {
		out = append(out, DumpEntry{Key: k.PolicyKey(), Deny: v.Flags&FlagDeny != 0, Packets: v.Packets, Bytes: v.Bytes})
	}
	return out, nil
}

func (m *Map) dumpRaw() (map[Key]Value, error) {
	out := make(map[Key]Value)
	var (
		k Key
		v Value
	)
	it := m.m.Iterate()
	for it.Next(&k, &v) {
		out[k] = v
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("dump policy map of endpoint %d: %w", m.epID, err)
	}
	return out, nil
}
