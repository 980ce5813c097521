package ipcachemap

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/policy/identity"
)

// Map is the BPF ipcache map. Every write that changes something bumps
// the ipcache revision in the config map afterwards, so that established
// flows are looked up again (a peer's identity may have changed).
type Map struct {
	m   *ebpf.Map
	cfg *configmap.Map
}

// Open opens the ipcache map pinned under root, creating and pinning it if
// missing or incompatible, and the config map it bumps the revision of.
func Open(log *slog.Logger, root string) (*Map, error) {
	m, err := bpfmap.OpenShared(log, root, MapName)
	if err != nil {
		return nil, err
	}
	cfg, err := configmap.Open(log, root)
	if err != nil {
		m.Close()
		return nil, err
	}
	return &Map{m: m, cfg: cfg}, nil
}

// Close releases the maps' file descriptors; the pins stay.
func (m *Map) Close() error { return errors.Join(m.m.Close(), m.cfg.Close()) }

// bump bumps the ipcache revision after a write that may have changed
// the map (even one that failed part way).
func (m *Map) bump() error {
	_, err := m.cfg.BumpIPCacheRevision()
	return err
}

// Upsert maps prefix to id.
func (m *Map) Upsert(prefix netip.Prefix, id identity.NumericIdentity) error {
	k, err := NewKey(prefix)
	if err != nil {
		return err
	}
	if err := m.m.Update(&k, NewValue(id), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("update ipcache entry %v: %w", prefix, err)
	}
	return m.bump()
}

// Delete removes prefix; a missing prefix is not an error.
func (m *Map) Delete(prefix netip.Prefix) error {
	k, err := NewKey(prefix)
	if err != nil {
		return err
	}
	err = m.m.Delete(&k)
	switch {
	case errors.Is(err, ebpf.ErrKeyNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("delete ipcache entry %v: %w", prefix, err)
	}
	return m.bump()
}

// Lookup returns the identity of the longest prefix covering addr, as the
// programs see it; ok is false when no prefix covers it (the programs
// then use world).
func (m *Map) Lookup(addr netip.Addr) (id identity.NumericIdentity, ok bool, err error) {
	k, err := hostKey(addr)
	if err != nil {
		return 0, false, err
	}
	var v Value
	err = m.m.Lookup(&k, &v)
	switch {
	case errors.Is(err, ebpf.ErrKeyNotExist):
		return 0, false, nil
	case err != nil:
		return 0, false, fmt.Errorf("look up ipcache %v: %w", addr, err)
	}
	return identity.NumericIdentity(v.Identity), true, nil
}

// Dump returns every entry of the map, by prefix.
func (m *Map) Dump() (map[netip.Prefix]datapath.IPCacheMapEntry, error) {
	out := make(map[netip.Prefix]datapath.IPCacheMapEntry)
	var (
		k Key
		v Value
	)
	it := m.m.Iterate()
	for it.Next(&k, &v) {
		e := entry(k, v)
		out[e.Prefix] = e
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("dump ipcache map: %w", err)
	}
	return out, nil
}

// Apply writes a batch of changes in order (a later change of a prefix
// wins) with ApplyBatch.
func (m *Map) Apply(changes []datapath.IPCacheMapChange) error {
	last := make(map[netip.Prefix]datapath.IPCacheMapChange, len(changes))
	for _, c := range changes {
		if !c.Entry.Prefix.IsValid() {
			return fmt.Errorf("apply ipcache changes: prefix %v is not valid", c.Entry.Prefix)
		}
		last[c.Entry.Prefix.Masked()] = c
	}
	var upserts []datapath.IPCacheMapEntry
	var deletes []netip.Prefix
	for p, c := range last {
		if c.Delete {
			deletes = append(deletes, p)
		} else {
			upserts = append(upserts, c.Entry)
		}
	}
	return m.ApplyBatch(upserts, deletes)
}

// ApplyBatch writes upserts and removes deletes, in batches where the
// kernel supports them. Every prefix is validated first: on a bad prefix
// nothing is written.
func (m *Map) ApplyBatch(upserts []datapath.IPCacheMapEntry, deletes []netip.Prefix) error {
	keys := make([]Key, 0, len(upserts))
	values := make([]Value, 0, len(upserts))
	for _, e := range upserts {
		k, err := NewKey(e.Prefix)
		if err != nil {
			return fmt.Errorf("apply ipcache batch: %w", err)
		}
		keys = append(keys, k)
		values = append(values, entryValue(e))
	}
	delKeys := make([]Key, 0, len(deletes))
	for _, p := range deletes {
		k, err := NewKey(p)
		if err != nil {
			return fmt.Errorf("apply ipcache batch: %w", err)
		}
		delKeys = append(delKeys, k)
	}
	if len(keys)+len(delKeys) == 0 {
		return nil
	}
	// In key order the trie's insertions walk shared paths: fewer cache
	// misses than the random order of a Go map's iteration.
	sortEntries(keys, values)
	_, uerr := bpfmap.BatchUpdate(m.m, keys, values)
	var derr error
	if uerr == nil {
		_, derr = bpfmap.BatchDelete(m.m, delKeys)
	}
	if err := errors.Join(uerr, derr, m.bump()); err != nil {
		return fmt.Errorf("apply ipcache batch: %w", err)
	}
	return nil
}

// Reconcile makes the map hold exactly desired: it writes the entries
// that are missing or differ and deletes those desired does not have. It
// returns how many entries it wrote and deleted. Duplicate prefixes in
// desired: the last one wins.
func (m *Map) Reconcile(desired []datapath.IPCacheMapEntry) (upserted, deleted int, err error) {
	want := make(map[netip.Prefix]datapath.IPCacheMapEntry, len(desired))
	for _, e := range desired {
		if !e.Prefix.IsValid() {
			return 0, 0, fmt.Errorf("reconcile ipcache map: prefix %v is not valid", e.Prefix)
		}
		e.Prefix = e.Prefix.Masked()
		want[e.Prefix] = e
	}
	actual, err := m.Dump()
	if err != nil {
		return 0, 0, err
	}
	var upserts []datapath.IPCacheMapEntry
	for p, e := range want {
		if got, ok := actual[p]; !ok || got != e {
			upserts = append(upserts, e)
		}
	}
	var deletes []netip.Prefix
	for p := range actual {
		if _, ok := want[p]; !ok {
			deletes = append(deletes, p)
		}
	}
	if err := m.ApplyBatch(upserts, deletes); err != nil {
		return 0, 0, fmt.Errorf("reconcile ipcache map: %w", err)
	}
	return len(upserts), len(deletes), nil
}

// sortEntries sorts keys by family, address and prefix length, values
// along.
func sortEntries(keys []Key, values []Value) {
	type entry struct {
		hi, lo uint64 // family and prefix length, address
		lo2    uint64
		i      int
	}
	es := make([]entry, len(keys))
	for i, k := range keys {
		es[i] = entry{
			hi:  uint64(k.Family)<<32 | uint64(k.Prefixlen),
			lo:  binary.BigEndian.Uint64(k.Addr[:8]),
			lo2: binary.BigEndian.Uint64(k.Addr[8:]),
			i:   i,
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.hi>>32, b.hi>>32); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		if c := cmp.Compare(a.lo2, b.lo2); c != 0 {
			return c
		}
		return cmp.Compare(a.hi, b.hi)
	})
	sk, sv := slices.Clone(keys), slices.Clone(values)
	for i, e := range es {
		keys[i], values[i] = sk[e.i], sv[e.i]
	}
}
