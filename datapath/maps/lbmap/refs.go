package lbmap

import "github.com/apiary-net/apiary/datapath"

// backendRefs are the frontends that use one backend, each with the
// state it gives the backend. A slice, not a map: most backends serve
// one frontend (a few with NodePorts), and a map per backend made an
// initial sync of 100,000 backends allocate about 40 MB.
type backendRefs []backendRef

type backendRef struct {
	frontend addrKey
	state    datapath.BackendState
}

// set records that fe uses the backend with state st.
func (r backendRefs) set(fe addrKey, st datapath.BackendState) backendRefs {
	for i := range r {
		if r[i].frontend == fe {
			r[i].state = st
			return r
		}
	}
	return append(r, backendRef{frontend: fe, state: st})
}

// without returns r without fe.
func (r backendRefs) without(fe addrKey) backendRefs {
	for i := range r {
		if r[i].frontend == fe {
			last := len(r) - 1
			r[i] = r[last]
			return r[:last]
		}
	}
	return r
}

// best returns the most active state any frontend but skip gives the
// backend, or from when that is more active (Quarantined: none).
func (r backendRefs) best(skip addrKey, from datapath.BackendState) datapath.BackendState {
	for i := range r {
		if r[i].frontend != skip && r[i].state < from {
			from = r[i].state
		}
	}
	return from
}

// backend is a backend id the writer holds, in w.backends (by id) and
// w.byAddr: its entry as written (written: there is one) and the
// frontends that use it. One record for both, so that a new or deleted
// backend costs a few map operations, not one per map.
//
// 64 bytes (an initial sync makes 100,000): the fields are in an order
// that leaves no padding.
type backend struct {
	refs        backendRefs
	id          uint32
	entry       backendEntry
	written     bool
	bulk        bulkState // during createBulk
	bulkCluster uint32    // during createBulk
}

// maxFreeBackends bounds the records kept for reuse (a deleted service
// leaves one per backend).
const maxFreeBackends = 1024

// backendAt returns the backend record of address key, or a new one
// with a new id (made).
func (w *Writer) backendAt(key addrKey) (be *backend, made bool, err error) {
	if be = w.byAddr.get(&key); be != nil {
		return be, false, nil
	}
	id, err := w.allocBackendID()
	if err != nil {
		return nil, false, err
	}
	return w.newBackend(id, key), true, nil
}

// newBackend records backend id at addr, with no entry written and no
// frontend. It reuses a record a deleted backend left, or takes one from
// a block (w.slab): a one-endpoint change allocates nothing, an initial
// sync a few blocks.
func (w *Writer) newBackend(id uint32, addr addrKey) *backend {
	var be *backend
	var refs backendRefs
	if n := len(w.free); n > 0 {
		be, w.free = w.free[n-1], w.free[:n-1]
		refs = be.refs[:0] // its room, for the new references
	} else {
		if len(w.slab) == 0 {
			// Blocks grow with the writer: few blocks for an initial
			// sync, little unused room.
			w.slab = make([]backend, max(64, w.backends.len()/8))
		}
		// A slab's record is only written: reading its fresh page first
		// maps the zero page, and the write then costs a second fault
		// and a TLB flush on every CPU.
		be, w.slab = &w.slab[0], w.slab[1:]
	}
	*be = backend{id: id, entry: backendEntry{addr: addr}, refs: refs}
	w.backends.set(id, be)
	w.byAddr.set(&addr, be)
	return be
}

// forget removes be from the writer's maps and keeps its record for
// reuse.
func (w *Writer) forget(be *backend) {
	w.backends.del(be.id)
	w.byAddr.del(&be.entry.addr, be)
	if len(w.free) < maxFreeBackends {
		w.free = append(w.free, be)
	}
}

// dropRef removes fe from the frontends of backend id.
func (w *Writer) dropRef(id uint32, fe addrKey) {
	if be := w.backends.get(id); be != nil {
		be.refs = be.refs.without(fe)
	}
}
