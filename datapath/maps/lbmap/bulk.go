package lbmap

import (
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// batch is a typed batch of map writes.
type batch[K, V any] struct {
	keys   []K
	values []V
}

// presize makes room for n entries.
func (b *batch[K, V]) presize(n int) {
	b.keys, b.values = make([]K, 0, n), make([]V, 0, n)
}

func (b *batch[K, V]) add(k K, v V) {
	b.keys = append(b.keys, k)
	b.values = append(b.values, v)
}

// write writes the batch; it returns how many entries, from the first,
// were written.
func (b *batch[K, V]) write(m *ebpf.Map) (int, error) {
	return bpfmap.BatchUpdate(m, b.keys, b.values)
}

// svcBatch are service-map writes of both families.
type svcBatch struct {
	v4 batch[Service4Key, ServiceValue]
	v6 batch[Service6Key, ServiceValue]
}

func (b *svcBatch) add(fe datapath.L3n4Addr, slot uint16, v ServiceValue) {
	if fe.Addr.Is4() {
		b.v4.add(service4Key(fe, slot), v)
	} else {
		b.v6.add(service6Key(fe, slot), v)
	}
}

func (b *svcBatch) write(m *Maps) error {
	if _, err := b.v4.write(m.svc4); err != nil {
		return err
	}
	_, err := b.v6.write(m.svc6)
	return err
}

// plan is a new frontend of createBulk.
type plan struct {
	s      *serviceEntry
	active []uint32
	flags  uint8
	secs   uint32
}

// createBulk writes ds, frontends the maps do not hold, in batches that
// keep the write order of upsert across all of them: every backend, then
// every rev-NAT entry and affinity match, then every slot, then every
// master entry (the programs match a frontend only once its master entry
// is there). It is the initial sync's path: a batch costs about one
// syscall where upsert makes one per entry.
func (w *Writer) createBulk(ds []desired) error {
	refs := 0
	for _, d := range ds {
		refs += len(d.backends)
	}
	w.presize(len(ds), refs)
	plans := make([]plan, 0, len(ds))
	// One array each for the members and active backends of all
	// frontends, not two per frontend.
	members := make([]member, refs)
	active := make([]uint32, refs)
	var ids []uint32 // of one frontend's backends, in its order
	var (
		rev4    batch[uint16, RevNAT4Value]
		rev6    batch[uint16, RevNAT6Value]
		be4     batch[uint32, Backend4Value]
		be6     batch[uint32, Backend6Value]
		matches batch[AffinityMatchKey, uint8]
		touched = make([]*backend, 0, refs)
	)
	defer func() {
		for _, be := range touched {
			be.bulk = bulkState{}
		}
	}()
	for _, d := range ds {
		idx, err := w.pickRevNAT(d.frontend)
		if err != nil {
			return err
		}
		switch v := revNATValue(d.frontend).(type) {
		case *RevNAT4Value:
			rev4.add(idx, *v)
		case *RevNAT6Value:
			rev6.add(idx, *v)
		}
		s := &serviceEntry{frontend: d.frontend, members: members[:0:len(d.backends)]}
		members = members[len(d.backends):]
		s.master.RevNATIndex = idx
		w.services[d.frontend] = s
		p := plan{s: s, flags: d.flags, secs: d.affinity, active: active[:0:len(d.backends)]}
		active = active[len(d.backends):]
		ids = ids[:0]
		for _, b := range d.backends {
			be := w.byAddr[b.addr]
			if be == nil {
				id, err := w.allocBackendID()
				if err != nil {
					return fmt.Errorf("service %s: %w", d.frontend, err)
				}
				be = w.newBackend(id, b.addr)
			}
			if !be.bulk.touched {
				be.bulk = bulkState{touched: true, state: datapath.BackendQuarantined, others: len(be.refs) > 0}
				touched = append(touched, be)
			}
			be.bulk.state, be.bulk.clusterID = min(be.bulk.state, b.state), b.clusterID
			be.refs = be.refs.set(d.frontend, b.state)
			id := be.id
			ids = append(ids, id)
			if b.state == datapath.BackendActive {
				p.active = append(p.active, id)
				if d.flags&FlagAffinity != 0 {
					matches.add(AffinityMatchKey{BackendID: id, RevNATIndex: idx}, 1)
				}
			}
		}
		for k := range d.backends {
			b := d.sorted(k)
			s.members = append(s.members, member{addr: b.addr, clusterID: b.clusterID, state: b.state, id: ids[d.pos(k)]})
		}
		plans = append(plans, p)
	}
	be4.presize(len(touched))
	var written4, written6 []*backend
	written4 = make([]*backend, 0, len(touched))
	for _, be := range touched {
		if be.bulk.others {
			be.bulk.state = be.refs.best(datapath.L3n4Addr{}, datapath.BackendQuarantined)
		}
		e := be.bulk.entry(be.entry.addr)
		if be.written && be.entry == e {
			continue
		}
		if e.addr.Addr.Is4() {
			be4.add(be.id, backend4Value(e))
			written4 = append(written4, be)
		} else {
			be6.add(be.id, backend6Value(e))
			written6 = append(written6, be)
		}
	}
	if err := w.writeBulk(&be4, &be6, written4, written6, &rev4, &rev6, &matches); err != nil {
		return err
	}
	// Sized for IPv4 frontends, the common case: the batches do not grow
	// step by step (an initial sync's slots are most of its entries).
	var slots, masters svcBatch
	slots.v4.presize(refs)
	masters.v4.presize(len(ds))
	for _, p := range plans {
		if len(p.active) > 0x7fff {
			return fmt.Errorf("service %s: %d active backends, at most %d", p.s.frontend, len(p.active), 0x7fff)
		}
		for i, id := range p.active {
			slots.add(p.s.frontend, uint16(i+1), ServiceValue{BackendID: id, RevNATIndex: p.s.master.RevNATIndex})
		}
		masters.add(p.s.frontend, 0, ServiceValue{Count: uint16(len(p.active)), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, AffinityTimeout: p.secs})
	}
	if err := slots.write(w.m); err != nil {
		return fmt.Errorf("write backend slots: %w", err)
	}
	for _, p := range plans {
		p.s.slots = p.active
	}
	if err := masters.write(w.m); err != nil {
		return fmt.Errorf("write master entries: %w", err)
	}
	for _, p := range plans {
		p.s.written, p.s.synced = true, true
		p.s.master = ServiceValue{Count: uint16(len(p.active)), RevNATIndex: p.s.master.RevNATIndex, Flags: p.flags, AffinityTimeout: p.secs}
	}
	return nil
}

// writeBulk writes the backends, rev-NAT entries and affinity matches of
// createBulk and records what was written.
func (w *Writer) writeBulk(be4 *batch[uint32, Backend4Value], be6 *batch[uint32, Backend6Value], written4, written6 []*backend,
	rev4 *batch[uint16, RevNAT4Value], rev6 *batch[uint16, RevNAT6Value], matches *batch[AffinityMatchKey, uint8]) error {
	n4, err := be4.write(w.m.be4)
	for _, be := range written4[:n4] {
		be.entry, be.written = be.bulk.entry(be.entry.addr), true
	}
	if err != nil {
		return fmt.Errorf("write backends: %w", err)
	}
	n6, err := be6.write(w.m.be6)
	for _, be := range written6[:n6] {
		be.entry, be.written = be.bulk.entry(be.entry.addr), true
	}
	if err != nil {
		return fmt.Errorf("write backends: %w", err)
	}
	for _, r := range []struct {
		m    *ebpf.Map
		keys []uint16
		fes  func(i int) datapath.L3n4Addr
		b    interface{ write(*ebpf.Map) (int, error) }
	}{
		{w.m.rev4, rev4.keys, func(i int) datapath.L3n4Addr { return rev4.values[i].frontend() }, rev4},
		{w.m.rev6, rev6.keys, func(i int) datapath.L3n4Addr { return rev6.values[i].frontend() }, rev6},
	} {
		n, err := r.b.write(r.m)
		for i, idx := range r.keys[:n] {
			w.revNATs[idx] = r.fes(i)
		}
		if err != nil {
			return fmt.Errorf("write rev-NAT entries: %w", err)
		}
	}
	n, err := matches.write(w.m.match)
	for _, k := range matches.keys[:n] {
		w.addMatch(k)
	}
	if err != nil {
		return fmt.Errorf("write affinity matches: %w", err)
	}
	return nil
}

// presize makes the writer's empty maps (the initial sync after a start
// on empty maps) large enough for services frontends and refs backend
// references, so that they do not grow step by step, and its block of
// backend records large enough for refs new backends.
func (w *Writer) presize(services, refs int) {
	if len(w.services) == 0 {
		w.services = make(map[datapath.L3n4Addr]*serviceEntry, services)
	}
	if len(w.backends) == 0 {
		w.backends = make(map[uint32]*backend, refs)
		w.byAddr = make(map[datapath.L3n4Addr]*backend, refs)
	}
	if len(w.slab) < refs {
		w.slab = make([]backend, refs)
	}
	if len(w.revNATs) == 0 {
		w.revNATs = make(map[uint16]datapath.L3n4Addr, services)
	}
}

// bulkState is what createBulk gathers about a backend it references:
// the most active state the new frontends give it (the state of all its
// frontends when others referred to it before) and the cluster the last
// one gives it.
type bulkState struct {
	touched   bool
	others    bool
	state     datapath.BackendState
	clusterID uint32
}

// entry is the backend entry at addr createBulk writes.
func (b bulkState) entry(addr datapath.L3n4Addr) backendEntry {
	return backendEntry{addr: addr, state: b.state, clusterID: b.clusterID}
}
