package lbmap

import (
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/datapath"
)

// ReconcileServices implements datapath.LBMapWriter: it validates every
// service first (one bad service: nothing is written), writes the
// frontends the maps do not hold in batches (createBulk), upserts the
// others (each backend referenced again), deletes the frontends not
// among them and every backend, rev-NAT and affinity entry nothing
// refers to. added counts frontends that were not in the maps, removed
// those deleted.
func (w *Writer) ReconcileServices(svcs []datapath.LBService) (added, removed int, err error) {
	want, err := checkAll(svcs)
	if err != nil {
		return 0, 0, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	// The maps held nothing (the writer mirrors them): once the new
	// frontends are written whole, nothing can be stale.
	empty := w.services.len() == 0 && w.backends.len() == 0 && len(w.revNATs) == 0 && len(w.matches) == 0
	var errs []error
	fresh, existing := w.splitFresh(svcs)
	// The new frontends first, in batches, so that a backend an existing
	// frontend drops but a new one takes is kept, not deleted and made
	// again.
	if err := w.createBulk(svcs, fresh); err != nil {
		errs = append(errs, err)
	} else {
		added += len(fresh)
		if empty {
			w.reservedRevNAT.clear()
			return added, 0, nil
		}
	}
	d := &w.scratch.in
	for _, i := range existing {
		if err := d.parse(svcs[i]); err != nil { // checked: does not fail
			errs = append(errs, err)
			continue
		}
		// The full path: every backend referenced again, so that a
		// reconcile repairs what a failed write left.
		w.services.get(&d.key).synced = false
		isNew, err := w.upsert(d)
		if err != nil {
			errs = append(errs, err)
		} else if isNew {
			added++
		}
	}
	w.reservedRevNAT.clear()
	for s := range w.services.all {
		if want.get(&s.key) {
			continue
		}
		if err := w.delete(s.key); err != nil {
			errs = append(errs, err)
		} else {
			removed++
		}
	}
	errs = append(errs, w.collect())
	return added, removed, errors.Join(errs...)
}

// splitFresh returns the indexes of the services of svcs whose
// frontends the writer does not hold, and of the others.
func (w *Writer) splitFresh(svcs []datapath.LBService) (fresh, existing []int32) {
	fresh = make([]int32, 0, len(svcs))
	for i := range svcs {
		if w.services.len() == 0 {
			fresh = append(fresh, int32(i))
			continue
		}
		if k := frontendKey(svcs[i].Frontend); w.services.get(&k) == nil {
			fresh = append(fresh, int32(i))
		} else {
			existing = append(existing, int32(i))
		}
	}
	return fresh, existing
}

// checkAll validates svcs and returns the set of their frontends. It
// keeps nothing of their backends: the writer parses each service again
// where it writes it (cheaper than an initial sync's 100,000 backends
// held in one array meanwhile).
func checkAll(svcs []datapath.LBService) (addrIndex[bool], error) {
	var want addrIndex[bool]
	want.reset(len(svcs))
	var d desired
	for _, svc := range svcs {
		if err := d.parse(svc); err != nil {
			return want, err
		}
		if want.get(&d.key) {
			return want, fmt.Errorf("service %s (%s): frontend listed twice", d.frontend, svc.Name)
		}
		want.set(&d.key, true)
	}
	return want, nil
}
