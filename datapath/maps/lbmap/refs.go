package lbmap

import "github.com/apiary-net/apiary/datapath"

// backendRefs are the frontends that use one backend, each with the
// state it gives the backend. A slice, not a map: most backends serve
// one frontend (a few with NodePorts), and a map per backend made an
// initial sync of 100,000 backends allocate about 40 MB.
type backendRefs []backendRef

type backendRef struct {
	frontend datapath.L3n4Addr
	state    datapath.BackendState
}

// get returns the state fe gives the backend, if it uses it.
func (r backendRefs) get(fe datapath.L3n4Addr) (datapath.BackendState, bool) {
	for i := range r {
		if r[i].frontend == fe {
			return r[i].state, true
		}
	}
	return 0, false
}

// set records that fe uses the backend with state st.
func (r backendRefs) set(fe datapath.L3n4Addr, st datapath.BackendState) backendRefs {
	for i := range r {
		if r[i].frontend == fe {
			r[i].state = st
			return r
		}
	}
	return append(r, backendRef{frontend: fe, state: st})
}

// without returns r without fe.
func (r backendRefs) without(fe datapath.L3n4Addr) backendRefs {
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
func (r backendRefs) best(skip datapath.L3n4Addr, from datapath.BackendState) datapath.BackendState {
	for i := range r {
		if r[i].frontend != skip && r[i].state < from {
			from = r[i].state
		}
	}
	return from
}

// addRef records in w.refs that fe uses backend id with state st. A new
// backend's list reuses one a deleted backend left (freeRefs): a
// one-endpoint change then allocates nothing.
func (w *Writer) addRef(id uint32, fe datapath.L3n4Addr, st datapath.BackendState) {
	r := w.refs[id]
	if r == nil && len(w.freeRefs) > 0 {
		last := len(w.freeRefs) - 1
		r, w.freeRefs = w.freeRefs[last], w.freeRefs[:last]
	}
	w.refs[id] = r.set(fe, st)
}

// maxFreeRefs bounds the lists kept for reuse (a deleted service leaves
// one per backend).
const maxFreeRefs = 1024

// forgetRefs removes backend id's list, kept for reuse.
func (w *Writer) forgetRefs(id uint32) {
	if r, ok := w.refs[id]; ok && cap(r) > 0 && len(w.freeRefs) < maxFreeRefs {
		w.freeRefs = append(w.freeRefs, r[:0])
	}
	delete(w.refs, id)
}

// dropRef removes fe from the frontends of backend id.
func (w *Writer) dropRef(id uint32, fe datapath.L3n4Addr) {
	if r, ok := w.refs[id]; ok {
		w.refs[id] = r.without(fe)
	}
}
