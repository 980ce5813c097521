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

// addRef records in w.refs that fe uses backend id with state st.
func (w *Writer) addRef(id uint32, fe datapath.L3n4Addr, st datapath.BackendState) {
	w.refs[id] = w.refs[id].set(fe, st)
}

// dropRef removes fe from the frontends of backend id.
func (w *Writer) dropRef(id uint32, fe datapath.L3n4Addr) {
	if r, ok := w.refs[id]; ok {
		w.refs[id] = r.without(fe)
	}
}
