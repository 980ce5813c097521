package configmap

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// MapName is the map's name in the programs (and its pin name).
const MapName = "config"

// Value is struct config_value.
type Value struct {
	Flags      uint32
	IPCacheRev uint32
}

// FlagVerdictEvents (CONFIG_VERDICT_EVENTS): the programs write policy
// verdict events.
const FlagVerdictEvents = 0x1

// FlagTraceEvents (CONFIG_TRACE_EVENTS, bpf/lib/trace.h): the programs
// write trace events of forwarded packets (new flows, ICMP errors and TCP
// SYN/FIN/RST; every packet with FlagTraceAll).
const FlagTraceEvents = 0x2

// FlagTraceAll (CONFIG_TRACE_ALL): with FlagTraceEvents, every forwarded
// packet is traced (--monitor-aggregation none or low).
const FlagTraceAll = 0x4

// writeMu serialises the read-modify-writes of every Map in the process
// (the agent may hold several: one per writer), so that two writers never
// lose each other's change.
var writeMu sync.Mutex

// Map is the config map.
type Map struct {
	m *ebpf.Map
}

// Open opens the config map pinned under root, creating it if missing.
func Open(log *slog.Logger, root string) (*Map, error) {
	m, err := bpfmap.OpenShared(log, root, MapName)
	if err != nil {
		return nil, err
	}
	return &Map{m: m}, nil
}

// Close releases the file descriptor.
func (m *Map) Close() error { return m.m.Close() }

// Flags returns the flags the programs see.
func (m *Map) Flags() (uint32, error) {
	var v Value
	if err := m.m.Lookup(uint32(0), &v); err != nil {
		return 0, fmt.Errorf("read datapath config: %w", err)
	}
	return v.Flags, nil
}

// IPCacheRevision returns the ipcache map's revision.
func (m *Map) IPCacheRevision() (uint32, error) {
	var v Value
	if err := m.m.Lookup(uint32(0), &v); err != nil {
		return 0, fmt.Errorf("read ipcache revision: %w", err)
	}
	return v.IPCacheRev, nil
}

// BumpIPCacheRevision increments the ipcache map's revision, after a
// write to the ipcache map: conntrack entries allowed under an older
// revision have their flow looked up again on their next packet (the
// peer's identity may have changed). Call it after the write completed.
func (m *Map) BumpIPCacheRevision() (uint32, error) {
	writeMu.Lock()
	defer writeMu.Unlock()
	var v Value
	if err := m.m.Lookup(uint32(0), &v); err != nil {
		return 0, fmt.Errorf("bump ipcache revision: %w", err)
	}
	v.IPCacheRev++
	if err := m.m.Update(uint32(0), &v, ebpf.UpdateExist); err != nil {
		return 0, fmt.Errorf("bump ipcache revision: %w", err)
	}
	return v.IPCacheRev, nil
}

// SetFlag sets (on) or clears flag.
func (m *Map) SetFlag(flag uint32, on bool) error {
	writeMu.Lock()
	defer writeMu.Unlock()
	var v Value
	if err := m.m.Lookup(uint32(0), &v); err != nil {
		return fmt.Errorf("set datapath config flag %#x: %w", flag, err)
	}
	if on {
		v.Flags |= flag
	} else {
		v.Flags &^= flag
	}
	if err := m.m.Update(uint32(0), &v, ebpf.UpdateExist); err != nil {
		return fmt.Errorf("set datapath config flag %#x: %w", flag, err)
	}
	return nil
}
