package lbmap

import (
	"errors"
	"fmt"
	"iter"

	"github.com/apiary-net/apiary/datapath"
)

// ReconcileServices implements datapath.LBMapWriter: it validates every
// service first (one bad service: nothing is written), writes the
// frontends the maps do not hold in batches (createBulk), upserts the
// others (each backend referenced again), deletes the frontends not
// among them and every backend, rev-NAT and affinity entry nothing
// refers to. added counts frontends that were not in the maps, removed
// those deleted. It ranges over svcs two or three times (survey, the new
// frontends, the others) and keeps nothing of a yielded list but what it
// parsed: the caller builds one service's lists at a time.
func (w *Writer) ReconcileServices(svcs iter.Seq[datapath.LBService]) (added, removed int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sv, err := w.survey(svcs)
	if err != nil {
		return 0, 0, err
	}
	// The maps held nothing (the writer mirrors them): once the new
	// frontends are written whole, nothing can be stale.
	empty := w.services.len() == 0 && w.backends.len() == 0 && len(w.revNATs) == 0 && len(w.matches) == 0
	var errs []error
	// The new frontends first, in batches, so that a backend an existing
	// frontend drops but a new one takes is kept, not deleted and made
	// again.
	if err := w.createBulk(svcs, &sv); err != nil {
		errs = append(errs, err)
	} else {
		added += len(sv.fresh)
		if empty {
			w.reservedRevNAT.clear()
			return added, 0, nil
		}
	}
	d := &w.scratch.in
	for svc := range picked(svcs, sv.existing) {
		if err := d.parse(svc); err != nil { // checked: does not fail
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
		if sv.want.get(&s.key) {
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

// survey is what ReconcileServices learns of its services in one pass
// before it writes anything: the set of their frontends (want), the
// positions of those the writer does not hold (fresh) and of the others
// (existing), and the fresh ones' backend counts. It keeps nothing of
// their backends: the writer parses each service again where it writes
// it.
type survey struct {
	want            addrIndex[bool]
	fresh, existing []int32
	sizes           []int32 // len(Backends) of fresh[k]
	refs            int     // their sum
}

// survey validates svcs (the first bad one fails the reconcile: nothing
// is written) and sorts them into fresh and existing; w.mu is held.
func (w *Writer) survey(svcs iter.Seq[datapath.LBService]) (survey, error) {
	var sv survey
	sv.want.reset(0)
	var d desired
	i := int32(0)
	for svc := range svcs {
		if err := d.parse(svc); err != nil {
			return sv, err
		}
		if sv.want.get(&d.key) {
			return sv, fmt.Errorf("service %s (%s): frontend listed twice", d.frontend, svc.Name)
		}
		sv.want.set(&d.key, true)
		if w.services.len() == 0 || w.services.get(&d.key) == nil {
			sv.fresh = append(sv.fresh, i)
			sv.sizes = append(sv.sizes, int32(len(svc.Backends)))
			sv.refs += len(svc.Backends)
		} else {
			sv.existing = append(sv.existing, i)
		}
		i++
	}
	return sv, nil
}

// picked yields the services of svcs at positions (ascending).
func picked(svcs iter.Seq[datapath.LBService], positions []int32) iter.Seq[datapath.LBService] {
	return func(yield func(datapath.LBService) bool) {
		if len(positions) == 0 {
			return
		}
		i, k := int32(0), 0
		for svc := range svcs {
			if i == positions[k] {
				if !yield(svc) {
					return
				}
				if k++; k == len(positions) {
					return
				}
			}
			i++
		}
	}
}
