package lbmap

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
)

// backendEntry is a backend as written in its family's backend map.
// Its address is a key: no pointer for the GC to follow in 100,000
// backend records.
type backendEntry struct {
	addr      addrKey
	state     datapath.BackendState
	clusterID uint32
}

// serviceEntry is a frontend as written: its master entry (written:
// whether there is one) and its slots; members are the backends it
// references, sorted by address. synced: its last write succeeded
// whole, so members are exactly the backends it has in the maps, with
// their states, its slots exactly the active ones, and its affinity
// matches those its flags ask for; the next upsert then looks only at
// what changed (diffMembers). Not synced (a new, restored or failed
// frontend), the next upsert references every backend again.
type serviceEntry struct {
	key     addrKey // the frontend's (its address: key.l3n4())
	written bool
	synced  bool
	master  ServiceValue
	slots   []uint32 // slot i+1 -> backend id
	members []member
}

// Writer writes services into the load-balancing maps with minimal
// updates. It mirrors what the maps hold, read back from them when it
// opens, so ids survive agent restarts. Safe for concurrent use.
type Writer struct {
	log *slog.Logger
	m   *Maps

	mu          sync.Mutex
	services    addrIndex[*serviceEntry]
	backends    backendTable               // by id
	byAddr      addrIndex[*backend]        // by address
	free        []*backend                 // records of deleted backends, for new ones
	slab        []backend                  // records not used yet
	revNATs     map[uint16]bool            // rev-NAT index -> its entry is in the IPv4 map (else IPv6)
	matches     map[uint16]map[uint32]bool // rev-NAT index -> backend ids with an affinity match entry
	ranges      map[uint16][]netip.Prefix  // rev-NAT index -> source ranges written (srcrange.go)
	nextBackend uint32
	topBackend  uint32 // no backend id above it was ever used
	nextRevNAT  uint16
	// reservedRevNAT are indexes picked for a write not yet done.
	reservedRevNAT revNATSet
	scratch        upsertScratch
	slotBatch      slotBatch
	// wrote counts the entries written or deleted; changes the
	// UpsertService and DeleteService calls that wrote any (Changes).
	wrote, changes uint64
	buf            keyBuf
	// deleted, when set, is told each backend deleted from the maps
	// (OnBackendDeleted).
	deleted func(datapath.L3n4Addr)
}

var _ datapath.LBMapWriter = (*Writer)(nil)

// OpenWriter opens the maps pinned under root (creating those missing)
// and reads them back.
func OpenWriter(log *slog.Logger, root string) (*Writer, error) {
	m, err := OpenMaps(log, root)
	if err != nil {
		return nil, err
	}
	w := &Writer{log: log, m: m}
	if err := w.restore(); err != nil {
		m.Close()
		return nil, fmt.Errorf("read load-balancing maps: %w", err)
	}
	return w, nil
}

// Close releases the maps' file descriptors; the pins and their content
// stay, so the programs keep balancing.
func (w *Writer) Close() error { return w.m.Close() }

// UpsertService implements datapath.LBMapWriter. Backends and slots are
// written before the master entry's count grows; the count shrinks before
// slots are removed; a backend no service uses any more is deleted last.
func (w *Writer) UpsertService(svc datapath.LBService) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := &w.scratch.in
	if err := d.parseFrontend(&svc); err != nil {
		return err
	}
	// The frontend's entry is looked up, and its first members read,
	// before the backends are: the CPU waits for both at once (cold
	// memory, in a writer of thousands of services).
	s := w.services.get(&d.key)
	if s != nil && len(s.members) > 0 {
		w.scratch.peek = s.members[0].id
	}
	if err := d.parseAllBackends(&svc); err != nil {
		return err
	}
	before := w.wrote
	_, err := w.upsertEntry(s, d)
	w.reservedRevNAT.clear()
	if w.wrote != before {
		w.changes++
	}
	return err
}

// Changes implements datapath.LBMapWriter: the UpsertService and
// DeleteService calls that wrote or deleted a map entry.
func (w *Writer) Changes() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

// DeleteService implements datapath.LBMapWriter: the master entry goes
// first, so the programs stop matching the frontend before anything it
// points to is removed.
func (w *Writer) DeleteService(frontend datapath.L3n4Addr) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	before := w.wrote
	err := w.delete(frontendKey(frontend))
	if w.wrote != before {
		w.changes++
	}
	return err
}

// upsert writes d; it reports whether the frontend was new.
func (w *Writer) upsert(d *desired) (bool, error) {
	return w.upsertEntry(w.services.get(&d.key), d)
}

// upsertEntry is upsert with s, d's entry (nil: none).
func (w *Writer) upsertEntry(s *serviceEntry, d *desired) (bool, error) {
	isNew := s == nil || !s.written
	if s == nil {
		s = newServiceEntry(d.frontend, len(d.backends))
		w.services.set(&d.key, s)
	}
	if s.master.RevNATIndex == 0 {
		idx, err := w.allocRevNAT(d.frontend)
		if err != nil {
			return false, err
		}
		s.master.RevNATIndex = idx
	}
	fast := s.synced
	s.synced = false
	if err := w.addRanges(s.master.RevNATIndex, d.ranges); err != nil {
		return false, fmt.Errorf("service %s: %w", d.frontend, err)
	}
	if err := w.diffMembers(s, d, fast); err != nil {
		return false, fmt.Errorf("service %s: %w", d.frontend, err)
	}
	if err := w.writeMembers(s, d, fast); err != nil {
		return false, fmt.Errorf("service %s: %w", d.frontend, err)
	}
	if len(w.ranges) > 0 {
		if err := w.dropRanges(s.master.RevNATIndex, d.ranges); err != nil {
			return false, fmt.Errorf("service %s: %w", d.frontend, err)
		}
	}
	s.synced = true
	return isNew, nil
}

// writeMembers writes what diffMembers found: affinity matches of the
// new active backends, the slots and the master entry, then drops the
// gone backends and their matches. fast: only the changes (the slots
// from the leaving and joining backends; the matches of those when the
// affinity flag stays), else everything.
func (w *Writer) writeMembers(s *serviceEntry, d *desired, fast bool) error {
	x := &w.scratch
	rev := s.master.RevNATIndex
	aff := d.flags&FlagAffinity != 0
	fastMatches := fast && aff == (s.master.Flags&FlagAffinity != 0)
	var want []uint32
	if fast {
		want = x.changedSlots(s.slots)
	} else {
		x.slots = stableSlots(x.slots, s.slots[:min(len(s.slots), int(s.master.Count))], x.active)
		want = x.slots
	}
	if err := w.writeActive(s, d, want, fastMatches); err != nil {
		// The gone backends are still referenced, the new ones too.
		s.members = unite(s.members, x.next)
		return err
	}
	var err error
	switch {
	case fastMatches && aff:
		for _, id := range x.leaving {
			if e := w.deleteMatch(AffinityMatchKey{BackendID: id, RevNATIndex: rev}); e != nil {
				err = errors.Join(err, e)
			}
		}
	case !fastMatches && len(w.matches[rev]) > 0:
		active := newIDSet(want, func(id uint32) uint32 { return id })
		for id := range w.matches[rev] {
			if !aff || !active.has(id) {
				err = errors.Join(err, w.deleteMatch(AffinityMatchKey{BackendID: id, RevNATIndex: rev}))
			}
		}
	}
	for _, id := range x.gone {
		w.dropRef(id, s.key)
	}
	s.keepMembers(x.next)
	if e := w.release(x.gone); e != nil {
		err = errors.Join(err, e)
	}
	return err
}

// writeActive writes the affinity matches of the active backends want
// (fast: only of the joining ones) when d asks for affinity, then the
// slots want and the master entry.
func (w *Writer) writeActive(s *serviceEntry, d *desired, want []uint32, fastMatches bool) error {
	rev := s.master.RevNATIndex
	if d.flags&FlagAffinity != 0 {
		if fastMatches {
			for _, j := range w.scratch.joining {
				if err := w.putMatch(AffinityMatchKey{BackendID: j.id, RevNATIndex: rev}); err != nil {
					return err
				}
			}
		} else {
			for _, id := range want {
				if err := w.putMatch(AffinityMatchKey{BackendID: id, RevNATIndex: rev}); err != nil {
					return err
				}
			}
		}
	}
	master := ServiceValue{Count: uint16(len(want)), RevNATIndex: rev, Flags: d.flags, Scope: s.key.scope(), AffinityTimeout: d.affinity}
	return w.writeSlots(s, want, master)
}

// writeSlots makes s's slots want and its master entry master: growing,
// slots first; shrinking, the master's count first.
func (w *Writer) writeSlots(s *serviceEntry, want []uint32, master ServiceValue) error {
	v4 := s.key.is4()
	svcMap := w.m.services(v4)
	if len(want) > 0x7fff {
		return fmt.Errorf("%d active backends, at most %d", len(want), 0x7fff)
	}
	// The changed slots, in order, then the master entry, in batches.
	b := &w.slotBatch
	for i := 0; i <= len(want); i++ {
		var slot uint16
		var v ServiceValue
		switch {
		case i == len(want) && (!s.written || s.master != master):
			v = master
		case i == len(want) || i < len(s.slots) && s.slots[i] == want[i]:
			continue
		default:
			slot, v = uint16(i+1), ServiceValue{BackendID: want[i], RevNATIndex: master.RevNATIndex}
		}
		if !b.add(&s.key, slot, v) {
			if err := w.flushSlots(s, svcMap, v4); err != nil {
				return err
			}
			b.add(&s.key, slot, v)
		}
	}
	if err := w.flushSlots(s, svcMap, v4); err != nil {
		return err
	}
	for len(s.slots) > len(want) {
		last := len(s.slots)
		if err := w.del(svcMap, w.buf.service(&s.key, uint16(last))); err != nil {
			return fmt.Errorf("delete backend slot %d: %w", last, err)
		}
		s.slots = s.slots[:last-1]
	}
	return nil
}

// flushSlots writes w.slotBatch, the changed slots and master entry of
// s, and records in s what was written.
func (w *Writer) flushSlots(s *serviceEntry, svcMap *ebpf.Map, v4 bool) error {
	b := &w.slotBatch
	n := b.n
	done, err := b.write(svcMap, v4)
	w.wrote += uint64(done)
	for k := range done {
		slot, v := b.slots[k], b.v[k]
		switch {
		case slot == 0:
			s.written, s.master = true, v
		case int(slot) <= len(s.slots):
			s.slots[slot-1] = v.BackendID
		default: // slots past the end come in order
			s.slots = append(s.slots, v.BackendID)
		}
	}
	if err == nil && done != n {
		err = fmt.Errorf("write backend slots: %d of %d written", done, n)
	}
	return err
}

// delete removes frontend fe: master, slots, rev-NAT entry, affinity
// matches, and the backends only it used.
func (w *Writer) delete(key addrKey) error {
	s := w.services.get(&key)
	if s == nil {
		return nil
	}
	fe := &s.key
	s.synced = false
	svcMap := w.m.services(fe.is4())
	if err := w.del(svcMap, w.buf.service(fe, 0)); err != nil {
		return fmt.Errorf("delete service %s: %w", fe, err)
	}
	s.written = false
	s.master.Count = 0
	for len(s.slots) > 0 {
		last := len(s.slots)
		if err := w.del(svcMap, w.buf.service(fe, uint16(last))); err != nil {
			return fmt.Errorf("delete service %s: slot %d: %w", fe, last, err)
		}
		s.slots = s.slots[:last-1]
	}
	rev := s.master.RevNATIndex
	err := w.dropRanges(rev, nil)
	for id := range w.matches[rev] {
		if e := w.deleteMatch(AffinityMatchKey{BackendID: id, RevNATIndex: rev}); e != nil {
			err = errors.Join(err, e)
		}
	}
	if rev != 0 {
		if derr := w.del(w.m.revNAT(fe.is4()), &rev); derr != nil {
			return fmt.Errorf("delete service %s: rev-NAT %d: %w", fe, rev, derr)
		}
		delete(w.revNATs, rev)
	}
	gone := w.scratch.gone[:0]
	for _, m := range s.members {
		w.dropRef(m.id, key)
		gone = append(gone, m.id)
	}
	w.scratch.gone = gone
	w.services.del(&key, s)
	if e := w.release(gone); e != nil {
		err = errors.Join(err, e)
	}
	if err != nil {
		return fmt.Errorf("delete service %s: %w", fe, err)
	}
	return nil
}

// OnBackendDeleted makes the writer call fn with each backend it deletes
// from the maps (no service uses it any more), under its lock: fn must
// not call the writer, and should only hand the backend on (the
// socket-level balancer's terminator destroys the sockets connected to
// it).
func (w *Writer) OnBackendDeleted(fn func(datapath.L3n4Addr)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deleted = fn
}

// Stats returns how many frontends and backends the maps hold.
func (w *Writer) Stats() (frontends, backends int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s := range w.services.all {
		if s.written {
			frontends++
		}
	}
	return frontends, w.backends.len()
}
