package lbmap

import (
	"fmt"
	"iter"
	"net/netip"
	"slices"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
)

// plan is a new frontend of createBulk: its entry, whose slots' room
// holds its n active backend ids, and its master entry's flags and
// affinity timeout.
type plan struct {
	s      *serviceEntry
	n      int32
	secs   uint32
	flags  uint8
	ranges []netip.Prefix // its source ranges (a copy: d is reused)
}

// active returns the ids of p's active backends.
func (p *plan) active() []uint32 { return p.s.slots[:p.n] }

// bulkState is what createBulk gathers about a backend it references:
// how many new frontends use it, the most active state they give it (the
// state of all its frontends when others referred to it before) and the
// cluster the last one gives it.
// (The cluster is the record's bulkCluster: the record stays 64 bytes.)
type bulkState struct {
	touched bool
	others  bool
	state   datapath.BackendState
}

// bulkEntry is the backend entry createBulk writes for be.
func (be *backend) bulkEntry() backendEntry {
	return backendEntry{addr: be.entry.addr, state: be.bulk.state, clusterID: be.bulkCluster}
}

// bulkWrite is one createBulk: the batches and what they are made of.
type bulkWrite struct {
	// touched are the backends referenced, each once; when the writer
	// held none before (fromEmpty), they are all its backends, not
	// listed (100,000 pointers in an initial sync).
	touched   []*backend
	fromEmpty bool
	plans     []plan
	blocks    serviceBlocks
	// refs is room for the references of new backends, one each (a
	// backend several new frontends share grows its own).
	refs    []backendRef
	ids     []uint32 // the backend ids of the frontend being planned
	rev4    batch[uint16, RevNAT4Value]
	rev6    batch[uint16, RevNAT6Value]
	be4     batch[uint32, Backend4Value]
	be6     batch[uint32, Backend6Value]
	matches batch[AffinityMatchKey, uint8]
	// The backends of be4 and be6, in their order.
	written4, written6 []*backend
}

// createBulk writes the services svcs[i] for i in fresh, frontends the
// maps do not hold (checked by checkAll), in batches that keep the write
// order of upsert across all of them: every backend, then every rev-NAT
// entry and affinity match, then every slot, then every master entry
// (the programs match a frontend only once its master entry is there).
// It is the initial sync's path: a batch costs about one syscall where
// upsert makes one per entry, and the writer's records (members, slots,
// references) come from a few arrays sized up front.
func (w *Writer) createBulk(svcs iter.Seq[datapath.LBService], sv *survey) error {
	var bw bulkWrite
	fresh, refs := sv.fresh, sv.refs
	w.presize(len(fresh), refs)
	bw.blocks.presize(sv.sizes)
	bw.refs = make([]backendRef, refs)
	bw.fromEmpty = w.backends.len() == 0
	if !bw.fromEmpty {
		bw.touched = make([]*backend, 0, refs)
	}
	bw.plans = make([]plan, 0, len(fresh))
	err := w.writeAll(&bw, picked(svcs, fresh))
	for be := range bw.allTouched(w) {
		be.bulk = bulkState{}
	}
	if err != nil {
		// A frontend whose rev-NAT entry was not written gets one on
		// its next upsert.
		for _, p := range bw.plans {
			if _, ok := w.revNATs[p.s.master.RevNATIndex]; !ok {
				p.s.master.RevNATIndex = 0
			}
		}
	}
	return err
}

// writeAll plans the frontends of createBulk and writes them.
func (w *Writer) writeAll(bw *bulkWrite, svcs iter.Seq[datapath.LBService]) error {
	d := &w.scratch.in
	for svc := range svcs {
		if err := d.parse(svc); err != nil { // checked: does not fail
			return err
		}
		if err := w.planService(bw, d); err != nil {
			return err
		}
	}
	if err := w.writeBackends(bw); err != nil {
		return err
	}
	if err := w.writeBulk(bw); err != nil {
		return err
	}
	for _, p := range bw.plans { // before the master entries flag them
		if err := w.addRanges(p.s.master.RevNATIndex, p.ranges); err != nil {
			return fmt.Errorf("service %s: %w", p.s.key, err)
		}
	}
	return w.writeBulkServices(bw)
}

// allTouched yields the backends createBulk referenced.
func (bw *bulkWrite) allTouched(w *Writer) func(yield func(*backend) bool) {
	if bw.fromEmpty {
		return w.backends.all
	}
	return func(yield func(*backend) bool) {
		for _, be := range bw.touched {
			if !yield(be) {
				return
			}
		}
	}
}

// resolve returns the backend of b for createBulk, found or allocated,
// and gathers its bulk state.
func (w *Writer) resolve(bw *bulkWrite, b *desiredBackend) (*backend, error) {
	be, made, err := w.backendAt(b.key)
	if err != nil {
		return nil, err
	}
	if made {
		if cap(be.refs) == 0 && len(bw.refs) > 0 {
			be.refs, bw.refs = bw.refs[:0:1], bw.refs[1:]
		}
	}
	if !be.bulk.touched {
		be.bulk = bulkState{touched: true, state: datapath.BackendQuarantined, others: len(be.refs) > 0}
		if !bw.fromEmpty {
			bw.touched = append(bw.touched, be)
		}
	}
	be.bulk.state, be.bulkCluster = min(be.bulk.state, b.state), b.clusterID
	return be, nil
}

// planService makes the writer's entry of new frontend d (rev-NAT
// index, members, references to its backends, found or allocated) and
// its active backends and affinity matches.
func (w *Writer) planService(bw *bulkWrite, d *desired) error {
	idx, err := w.pickRevNAT(d.frontend)
	if err != nil {
		return err
	}
	if d.frontend.Addr.Is4() {
		bw.rev4.add(idx, RevNAT4Value{Address: d.frontend.Addr.As4(), Port: netPort(d.frontend.Port)})
	} else {
		bw.rev6.add(idx, RevNAT6Value{Address: d.frontend.Addr.As16(), Port: netPort(d.frontend.Port)})
	}
	s := bw.blocks.next(d.frontend, len(d.backends))
	s.master.RevNATIndex = idx
	w.services.set(&d.key, s)
	p := plan{s: s, flags: d.flags, secs: d.affinity}
	if len(d.ranges) > 0 {
		p.ranges = slices.Clone(d.ranges)
	}
	active := s.slots[:0]
	bw.ids = bw.ids[:0]
	for i := range d.backends {
		b := &d.backends[i]
		be, err := w.resolve(bw, b)
		if err != nil {
			return fmt.Errorf("service %s: %w", d.frontend, err)
		}
		be.refs = be.refs.set(d.key, b.state)
		bw.ids = append(bw.ids, be.id)
		if b.state == datapath.BackendActive {
			active = append(active, be.id)
			if d.flags&FlagAffinity != 0 {
				bw.matches.add(AffinityMatchKey{BackendID: be.id, RevNATIndex: idx}, 1)
			}
		}
	}
	for k := range d.backends {
		b := d.sorted(k)
		s.members = append(s.members, member{addr: b.key, clusterID: b.clusterID, state: b.state, id: bw.ids[d.pos(k)]})
	}
	// The active ids stay in the room of s's slots (written: none yet).
	s.slots, p.n = active[:0], int32(len(active))
	bw.plans = append(bw.plans, p)
	return nil
}

// writeBackends writes, in chunks, the backend entries of createBulk
// that are new or change, and records what was written.
func (w *Writer) writeBackends(bw *bulkWrite) error {
	n := len(bw.touched)
	if bw.fromEmpty {
		n = w.backends.len()
	}
	n = min(n, bulkChunk)
	bw.be4.presize(n)
	bw.written4 = make([]*backend, 0, n)
	for be := range bw.allTouched(w) {
		if be.bulk.others {
			be.bulk.state = be.refs.best(addrKey{}, datapath.BackendQuarantined)
		}
		e := be.bulkEntry()
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
			be.entry, be.written = be.bulkEntry(), true
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
		v4   bool
		b    interface{ write(*ebpf.Map) (int, error) }
	}{
		{w.m.rev4, bw.rev4.keys, true, &bw.rev4},
		{w.m.rev6, bw.rev6.keys, false, &bw.rev6},
	} {
		n, err := r.b.write(r.m)
		for _, idx := range r.keys[:n] {
			w.revNATs[idx] = r.v4
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
		if p.n > 0x7fff {
			return fmt.Errorf("service %s: %d active backends, at most %d", p.s.key, p.n, 0x7fff)
		}
	}
	for _, p := range bw.plans {
		for i, id := range p.active() {
			slots.add(&p.s.key, uint16(i+1), ServiceValue{BackendID: id, RevNATIndex: p.s.master.RevNATIndex})
			if err := slots.flush(w.m, false); err != nil {
				return fmt.Errorf("write backend slots: %w", err)
			}
		}
	}
	if err := slots.flush(w.m, true); err != nil {
		return fmt.Errorf("write backend slots: %w", err)
	}
	for _, p := range bw.plans {
		p.s.slots = p.active()
	}
	for _, p := range bw.plans {
		masters.add(&p.s.key, 0, ServiceValue{Count: uint16(p.n), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, Scope: p.s.key.scope(), AffinityTimeout: p.secs})
		if err := masters.flush(w.m, false); err != nil {
			return fmt.Errorf("write master entries: %w", err)
		}
	}
	if err := masters.flush(w.m, true); err != nil {
		return fmt.Errorf("write master entries: %w", err)
	}
	for _, p := range bw.plans {
		p.s.written, p.s.synced = true, true
		p.s.master = ServiceValue{Count: uint16(p.n), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, Scope: p.s.key.scope(), AffinityTimeout: p.secs}
	}
	return nil
}

// presize makes the writer's empty maps (the initial sync after a start
// on empty maps) large enough for services frontends and refs backend
// references, so that they do not grow step by step.
func (w *Writer) presize(services, refs int) {
	if w.services.len() == 0 {
		w.services.reset(services)
	}
	if w.backends.len() == 0 {
		w.byAddr.reset(refs)
	}
	if len(w.revNATs) == 0 {
		w.revNATs = make(map[uint16]bool, services)
	}
}
