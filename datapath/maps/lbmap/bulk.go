package lbmap

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
)

// plan is a new frontend of createBulk.
type plan struct {
	s      *serviceEntry
	active []uint32
	flags  uint8
	secs   uint32
}

// bulkState is what createBulk gathers about a backend it references:
// how many new frontends use it, the most active state they give it (the
// state of all its frontends when others referred to it before) and the
// cluster the last one gives it.
type bulkState struct {
	touched   bool
	others    bool
	state     datapath.BackendState
	uses      int32
	clusterID uint32
}

// entry is the backend entry at addr createBulk writes.
func (b bulkState) entry(addr addrKey) backendEntry {
	return backendEntry{addr: addr, state: b.state, clusterID: b.clusterID}
}

// bulkWrite is one createBulk: the batches and what they are made of.
type bulkWrite struct {
	refs    int        // references of all frontends to their backends
	bes     []*backend // the backend of each reference, in the frontends' order
	touched []*backend // each backend referenced, once
	plans   []plan
	rev4    batch[uint16, RevNAT4Value]
	rev6    batch[uint16, RevNAT6Value]
	be4     batch[uint32, Backend4Value]
	be6     batch[uint32, Backend6Value]
	matches batch[AffinityMatchKey, uint8]
	// The backends of be4 and be6, in their order.
	written4, written6 []*backend
}

// createBulk writes ds, frontends the maps do not hold, in batches that
// keep the write order of upsert across all of them: every backend, then
// every rev-NAT entry and affinity match, then every slot, then every
// master entry (the programs match a frontend only once its master entry
// is there). It is the initial sync's path: a batch costs about one
// syscall where upsert makes one per entry, and the writer's records
// (members, slots, references) come from a few arrays sized up front.
func (w *Writer) createBulk(ds []desired) error {
	var bw bulkWrite
	for _, d := range ds {
		bw.refs += len(d.backends)
	}
	w.presize(len(ds), bw.refs)
	defer func() {
		for _, be := range bw.touched {
			be.bulk = bulkState{}
		}
	}()
	if err := w.resolveBulk(&bw, ds); err != nil {
		return err
	}
	if err := w.planBulk(&bw, ds); err != nil {
		return err
	}
	if err := w.writeBackends(&bw); err != nil {
		return err
	}
	if err := w.writeBulk(&bw); err != nil {
		return err
	}
	return w.writeBulkServices(&bw)
}

// resolveBulk finds or allocates the backend of every reference of ds,
// then gives every backend room for its new references in one array.
func (w *Writer) resolveBulk(bw *bulkWrite, ds []desired) error {
	bw.bes = make([]*backend, 0, bw.refs)
	bw.touched = make([]*backend, 0, bw.refs)
	for _, d := range ds {
		for _, b := range d.backends {
			be := w.byAddr[b.key]
			if be == nil {
				id, err := w.allocBackendID()
				if err != nil {
					return fmt.Errorf("service %s: %w", d.frontend, err)
				}
				be = w.newBackend(id, b.key)
			}
			if !be.bulk.touched {
				be.bulk = bulkState{touched: true, state: datapath.BackendQuarantined, others: len(be.refs) > 0}
				bw.touched = append(bw.touched, be)
			}
			be.bulk.uses++
			be.bulk.state, be.bulk.clusterID = min(be.bulk.state, b.state), b.clusterID
			bw.bes = append(bw.bes, be)
		}
	}
	room := 0
	for _, be := range bw.touched {
		room += len(be.refs) + int(be.bulk.uses)
	}
	refs := make([]backendRef, room)
	for _, be := range bw.touched {
		n := len(be.refs) + int(be.bulk.uses)
		be.refs, refs = append(refs[:0:n], be.refs...), refs[n:]
	}
	return nil
}

// planBulk makes the writer's entry of every frontend of ds (rev-NAT
// index, members, references) and its active backends and affinity
// matches.
func (w *Writer) planBulk(bw *bulkWrite, ds []desired) error {
	bw.plans = make([]plan, 0, len(ds))
	// The entries (with their members and slots) of all frontends from
	// an array per block size, not three allocations per frontend.
	var blocks serviceBlocks
	sizes := make([]int, len(ds))
	for i := range ds {
		sizes[i] = len(ds[i].backends)
	}
	blocks.presize(sizes)
	bes := bw.bes
	for _, d := range ds {
		idx, err := w.pickRevNAT(d.frontend)
		if err != nil {
			return err
		}
		if d.frontend.Addr.Is4() {
			bw.rev4.add(idx, RevNAT4Value{Address: d.frontend.Addr.As4(), Port: netPort(d.frontend.Port)})
		} else {
			bw.rev6.add(idx, RevNAT6Value{Address: d.frontend.Addr.As16(), Port: netPort(d.frontend.Port)})
		}
		n := len(d.backends)
		s := blocks.next(d.frontend, n)
		s.master.RevNATIndex = idx
		w.services[d.key] = s
		p := plan{s: s, flags: d.flags, secs: d.affinity, active: s.slots[:0]}
		for i, b := range d.backends {
			be := bes[i]
			be.refs = be.refs.set(d.key, b.state)
			if b.state == datapath.BackendActive {
				p.active = append(p.active, be.id)
				if d.flags&FlagAffinity != 0 {
					bw.matches.add(AffinityMatchKey{BackendID: be.id, RevNATIndex: idx}, 1)
				}
			}
		}
		for k := range d.backends {
			b := d.sorted(k)
			s.members = append(s.members, member{addr: b.key, clusterID: b.clusterID, state: b.state, id: bes[d.pos(k)].id})
		}
		bes = bes[n:]
		bw.plans = append(bw.plans, p)
	}
	return nil
}

// writeBackends writes, in chunks, the backend entries of createBulk
// that are new or change, and records what was written.
func (w *Writer) writeBackends(bw *bulkWrite) error {
	n := min(len(bw.touched), bulkChunk)
	bw.be4.presize(n)
	bw.written4 = make([]*backend, 0, n)
	for _, be := range bw.touched {
		if be.bulk.others {
			be.bulk.state = be.refs.best(addrKey{}, datapath.BackendQuarantined)
		}
		e := be.bulk.entry(be.entry.addr)
		if be.written && be.entry == e {
			continue
		}
		if e.addr.is4() {
			bw.be4.add(be.id, backend4Value(e))
			bw.written4 = append(bw.written4, be)
		} else {
			bw.be6.add(be.id, backend6Value(e))
			bw.written6 = append(bw.written6, be)
		}
		if err := w.flushBackends(bw, false); err != nil {
			return err
		}
	}
	return w.flushBackends(bw, true)
}

// flushBackends writes a family's backend batch when it holds a chunk
// (all: whatever it holds), records what was written and empties it.
func (w *Writer) flushBackends(bw *bulkWrite, all bool) error {
	for _, b := range []struct {
		batch   *batch[uint32, Backend4Value]
		batch6  *batch[uint32, Backend6Value]
		written *[]*backend
	}{{batch: &bw.be4, written: &bw.written4}, {batch6: &bw.be6, written: &bw.written6}} {
		var n int
		var err error
		switch {
		case b.batch != nil && (all || b.batch.full()):
			n, err = b.batch.write(w.m.be4)
			b.batch.reset()
		case b.batch6 != nil && (all || b.batch6.full()):
			n, err = b.batch6.write(w.m.be6)
			b.batch6.reset()
		default:
			continue
		}
		for _, be := range (*b.written)[:n] {
			be.entry, be.written = be.bulk.entry(be.entry.addr), true
		}
		*b.written = (*b.written)[:0]
		if err != nil {
			return fmt.Errorf("write backends: %w", err)
		}
	}
	return nil
}

// writeBulk writes the rev-NAT entries and affinity matches of
// createBulk and records what was written.
func (w *Writer) writeBulk(bw *bulkWrite) error {
	for _, r := range []struct {
		m    *ebpf.Map
		keys []uint16
		fes  func(i int) datapath.L3n4Addr
		b    interface{ write(*ebpf.Map) (int, error) }
	}{
		{w.m.rev4, bw.rev4.keys, func(i int) datapath.L3n4Addr { return bw.rev4.values[i].frontend() }, &bw.rev4},
		{w.m.rev6, bw.rev6.keys, func(i int) datapath.L3n4Addr { return bw.rev6.values[i].frontend() }, &bw.rev6},
	} {
		n, err := r.b.write(r.m)
		for i, idx := range r.keys[:n] {
			w.revNATs[idx] = r.fes(i)
		}
		if err != nil {
			return fmt.Errorf("write rev-NAT entries: %w", err)
		}
	}
	n, err := bw.matches.write(w.m.match)
	for _, k := range bw.matches.keys[:n] {
		w.addMatch(k)
	}
	if err != nil {
		return fmt.Errorf("write affinity matches: %w", err)
	}
	return nil
}

// writeBulkServices writes the slots, then the master entries, of the
// plans, in chunks.
func (w *Writer) writeBulkServices(bw *bulkWrite) error {
	var slots, masters svcBatch
	slots.presize()
	masters.presize()
	for _, p := range bw.plans {
		if len(p.active) > 0x7fff {
			return fmt.Errorf("service %s: %d active backends, at most %d", p.s.frontend, len(p.active), 0x7fff)
		}
	}
	for _, p := range bw.plans {
		for i, id := range p.active {
			slots.add(p.s.frontend, uint16(i+1), ServiceValue{BackendID: id, RevNATIndex: p.s.master.RevNATIndex})
			if err := slots.flush(w.m, false); err != nil {
				return fmt.Errorf("write backend slots: %w", err)
			}
		}
	}
	if err := slots.flush(w.m, true); err != nil {
		return fmt.Errorf("write backend slots: %w", err)
	}
	for _, p := range bw.plans {
		p.s.slots = p.active
	}
	for _, p := range bw.plans {
		masters.add(p.s.frontend, 0, ServiceValue{Count: uint16(len(p.active)), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, AffinityTimeout: p.secs})
		if err := masters.flush(w.m, false); err != nil {
			return fmt.Errorf("write master entries: %w", err)
		}
	}
	if err := masters.flush(w.m, true); err != nil {
		return fmt.Errorf("write master entries: %w", err)
	}
	for _, p := range bw.plans {
		p.s.written, p.s.synced = true, true
		p.s.master = ServiceValue{Count: uint16(len(p.active)), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, AffinityTimeout: p.secs}
	}
	return nil
}

// presize makes the writer's empty maps (the initial sync after a start
// on empty maps) large enough for services frontends and refs backend
// references, so that they do not grow step by step.
func (w *Writer) presize(services, refs int) {
	if len(w.services) == 0 {
		w.services = make(map[addrKey]*serviceEntry, services)
	}
	if w.backends.len() == 0 {
		w.byAddr = make(map[addrKey]*backend, refs)
	}
	if len(w.revNATs) == 0 {
		w.revNATs = make(map[uint16]datapath.L3n4Addr, services)
	}
}
