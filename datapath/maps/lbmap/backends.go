package lbmap

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
)

// reference makes b a backend of fe: its id (kept, or allocated), and its
// entry written when new or changed. Several services share one entry;
// its state is the most active any of them gives it.
func (w *Writer) reference(b *desiredBackend, fe addrKey) (*backend, error) {
	be, made, err := w.backendAt(b.key)
	if err != nil {
		return nil, err
	}
	if !made && be.unchangedSole(b, fe) {
		return be, nil
	}
	e := backendEntry{addr: b.key, state: be.refs.best(fe, b.state), clusterID: b.clusterID}
	if err := w.writeBackend(be, e); err != nil {
		if len(be.refs) == 0 && !be.written {
			w.forget(be)
		}
		return nil, err
	}
	be.refs = be.refs.set(fe, b.state)
	return be, nil
}

// unchangedSole reports whether fe is the only service of be, with b's
// state, and the entry written is b's: referencing it again changes
// nothing (the common case of a service's unchanged backends on the full
// path, which skips the other services' states and the writes' checks).
func (be *backend) unchangedSole(b *desiredBackend, fe addrKey) bool {
	return len(be.refs) == 1 && be.refs[0].frontend == fe && be.refs[0].state == b.state &&
		be.written && be.entry == backendEntry{addr: b.key, state: b.state, clusterID: b.clusterID}
}

// writeBackend writes be's entry e unless the map holds it already.
func (w *Writer) writeBackend(be *backend, e backendEntry) error {
	if be.written && be.entry == e {
		return nil
	}
	if err := w.m.backends(e.addr.is4()).Update(w.buf.backendID(be.id), w.buf.backend(e), ebpf.UpdateAny); err != nil {
		return fmt.Errorf("write backend %d (%s): %w", be.id, e.addr, err)
	}
	be.entry, be.written = e, true
	w.wrote++
	return nil
}

// release deletes the backends of ids no service uses any more, and
// rewrites the state of those still used when it changed. A backend it
// fails to delete stays until a reconcile (collect); one whose state it
// fails to rewrite makes its frontends take the full path next.
func (w *Writer) release(ids []uint32) error {
	var err error
	for _, id := range ids {
		be := w.backends.get(id)
		if be == nil {
			continue
		}
		if len(be.refs) > 0 {
			e := be.entry
			e.state = be.refs.best(addrKey{}, datapath.BackendQuarantined)
			if werr := w.writeBackend(be, e); werr != nil {
				err = errors.Join(err, werr)
				// Its frontends' next upserts reference it again, so
				// one of them rewrites the state.
				for _, r := range be.refs {
					if s := w.services.get(&r.frontend); s != nil {
						s.synced = false
					}
				}
			}
			continue
		}
		if be.written {
			if derr := w.del(w.m.backends(be.entry.addr.is4()), w.buf.backendID(id)); derr != nil {
				err = errors.Join(err, fmt.Errorf("delete backend %d (%s): %w", id, be.entry.addr, derr))
				continue
			}
			if w.deleted != nil {
				w.deleted(be.entry.addr.l3n4())
			}
		}
		w.forget(be)
	}
	return err
}

// allocBackendID returns an unused backend id, going round the id space
// so that a freed id is reused as late as possible.
func (w *Writer) allocBackendID() (uint32, error) {
	for range min(w.backends.len()+1, maxBackendID) {
		id := w.nextBackend
		if id == 0 || id == maxBackendID {
			id = 1
		}
		w.nextBackend = id + 1
		if id > w.topBackend {
			// Past every id ever used: free, no lookup needed.
			w.topBackend = id
			return id, nil
		}
		if w.backends.get(id) == nil {
			return id, nil
		}
	}
	return 0, errors.New("allocate backend id: none left")
}

// allocRevNAT allocates a rev-NAT index (the service id) for fe and
// writes its reverse-NAT entry.
func (w *Writer) allocRevNAT(fe datapath.L3n4Addr) (uint16, error) {
	idx, err := w.pickRevNAT(fe)
	if err != nil {
		return 0, err
	}
	if err := w.m.revNAT(fe.Addr.Is4()).Update(&idx, revNATValue(fe), ebpf.UpdateAny); err != nil {
		return 0, fmt.Errorf("service %s: write rev-NAT %d: %w", fe, idx, err)
	}
	w.revNATs[idx] = fe.Addr.Is4()
	w.wrote++
	return idx, nil
}

// pickRevNAT returns a rev-NAT index no entry and no service uses, going
// round the index space.
func (w *Writer) pickRevNAT(fe datapath.L3n4Addr) (uint16, error) {
	for range maxRevNATIndex {
		idx := w.nextRevNAT
		if idx == 0 {
			idx = 1
		}
		w.nextRevNAT = idx + 1 // wraps to 0, read as 1
		// An index whose source ranges are still there (a delete that
		// failed) waits for collect: a new frontend must not inherit them.
		if _, used := w.revNATs[idx]; used || w.reservedRevNAT.has(idx) || len(w.ranges[idx]) > 0 {
			continue
		}
		w.reservedRevNAT.add(idx)
		return idx, nil
	}
	return 0, fmt.Errorf("service %s: allocate rev-NAT index: all %d in use", fe, maxRevNATIndex)
}

// revNATSet is a set of rev-NAT indexes, a bit each (8 KB, where a map
// of an initial sync's 10,000 took 160 KB).
type revNATSet struct {
	bits [(maxRevNATIndex + 1) / 64]uint64
	n    int
}

func (r *revNATSet) has(idx uint16) bool { return r.bits[idx/64]&(1<<(idx%64)) != 0 }

func (r *revNATSet) add(idx uint16) {
	r.bits[idx/64] |= 1 << (idx % 64)
	r.n++
}

// clear empties the set (nothing to do when it is empty: an upsert
// that allocates no index).
func (r *revNATSet) clear() {
	if r.n > 0 {
		r.bits, r.n = [len(r.bits)]uint64{}, 0
	}
}

func (w *Writer) putMatch(k AffinityMatchKey) error {
	if w.matches[k.RevNATIndex][k.BackendID] {
		return nil
	}
	one := uint8(1)
	if err := w.m.match.Update(&k, &one, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("write affinity match of backend %d: %w", k.BackendID, err)
	}
	w.addMatch(k)
	w.wrote++
	return nil
}

func (w *Writer) deleteMatch(k AffinityMatchKey) error {
	if err := w.del(w.m.match, &k); err != nil {
		return fmt.Errorf("delete affinity match of backend %d: %w", k.BackendID, err)
	}
	delete(w.matches[k.RevNATIndex], k.BackendID)
	if len(w.matches[k.RevNATIndex]) == 0 {
		delete(w.matches, k.RevNATIndex)
	}
	return nil
}

func (w *Writer) addMatch(k AffinityMatchKey) {
	if w.matches[k.RevNATIndex] == nil {
		w.matches[k.RevNATIndex] = map[uint32]bool{}
	}
	w.matches[k.RevNATIndex][k.BackendID] = true
}

// collect deletes what no service refers to: backends, rev-NAT entries,
// affinity matches (the full reconciliation after a restart).
func (w *Writer) collect() error {
	var errs []error
	var unused []uint32
	for be := range w.backends.all {
		if len(be.refs) == 0 {
			unused = append(unused, be.id)
		}
	}
	errs = append(errs, w.release(unused))
	owned := make(map[uint16]*serviceEntry, w.services.len())
	for s := range w.services.all {
		owned[s.master.RevNATIndex] = s
	}
	for idx, v4 := range w.revNATs {
		if owned[idx] != nil {
			continue
		}
		key := idx // escapes: allocated only for the entries deleted
		if err := w.del(w.m.revNAT(v4), &key); err != nil {
			errs = append(errs, fmt.Errorf("delete rev-NAT %d: %w", idx, err))
			continue
		}
		delete(w.revNATs, idx)
	}
	for rev := range w.ranges {
		if owned[rev] == nil {
			errs = append(errs, w.dropRanges(rev, nil))
		}
	}
	for rev, ids := range w.matches {
		s := owned[rev]
		var active idSet
		if s != nil {
			active = newIDSet(s.activeMembers(), func(id uint32) uint32 { return id })
		}
		for id := range ids {
			if s == nil || s.master.Flags&FlagAffinity == 0 || !active.has(id) {
				errs = append(errs, w.deleteMatch(AffinityMatchKey{BackendID: id, RevNATIndex: rev}))
			}
		}
	}
	return errors.Join(errs...)
}

// activeMembers returns the ids of s's active members.
func (s *serviceEntry) activeMembers() []uint32 {
	var out []uint32
	for _, m := range s.members {
		if m.state == datapath.BackendActive {
			out = append(out, m.id)
		}
	}
	return out
}
