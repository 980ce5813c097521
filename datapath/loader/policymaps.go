package loader

import (
	"errors"
	"fmt"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy"
)

// The policy-map writer: endpoints' map states written to their pinned
// policy maps. The loader keeps each endpoint's map open between calls so
// ApplyPolicyMapChanges can write increments against the last sync.

// SyncPolicyMap makes endpoint id's policy map (created if missing) hold
// exactly desired, writing only the difference; see policymap.Map.Sync.
// A state larger than the map is refused with a
// *datapath.PolicyMapFullError and the map is left as it was.
//
// A write that changed the map bumps the endpoint's policy revision, so
// that established flows have their policy looked up again on their next
// packet (see PolicyRevision).
func (l *Loader) SyncPolicyMap(id uint16, desired policy.MapState) (added, removed int, err error) {
	pm, err := l.cachedPolicyMap(id)
	if err != nil {
		return 0, 0, err
	}
	added, removed, err = pm.Sync(desired)
	return added, removed, errors.Join(err, l.bumpIfChanged(id, added+removed, err))
}

// ApplyPolicyMapChanges writes incremental changes to endpoint id's
// policy map, relative to its last SyncPolicyMap in this process
// (policymap.ErrNoBaseline without one); see policymap.Map.Apply.
func (l *Loader) ApplyPolicyMapChanges(id uint16, changes policy.MapChanges) error {
	pm, err := l.cachedPolicyMap(id)
	if err != nil {
		return err
	}
	added, removed, err := pm.Apply(changes)
	return errors.Join(err, l.bumpIfChanged(id, added+removed, err))
}

// bumpIfChanged bumps endpoint id's policy revision after a policy-map
// write that changed n entries, or that failed part way (the map may
// hold some of the changes); a refused oversized state wrote nothing.
func (l *Loader) bumpIfChanged(id uint16, n int, werr error) error {
	if n == 0 && (werr == nil || errors.Is(werr, datapath.ErrPolicyMapFull)) {
		return nil
	}
	l.mu.Lock()
	revs := l.revs
	l.mu.Unlock()
	if revs == nil {
		return fmt.Errorf("bump policy revision of endpoint %d: loader not open", id)
	}
	_, err := revs.BumpPolicyRevision(id)
	return err
}

// PolicyRevision returns endpoint id's policy revision: the number of
// SyncPolicyMap and ApplyPolicyMapChanges calls that changed its policy
// map since the endpoints map was created (it is pinned, so restarts keep
// counting).
func (l *Loader) PolicyRevision(id uint16) (uint32, error) {
	l.mu.Lock()
	revs := l.revs
	l.mu.Unlock()
	if revs == nil {
		return 0, fmt.Errorf("read policy revision of endpoint %d: loader not open", id)
	}
	return revs.PolicyRevision(id)
}

// DeletePolicyMap removes endpoint id's policy map (programs still
// attached keep it until they are detached); none is not an error.
func (l *Loader) DeletePolicyMap(id uint16) error {
	l.mu.Lock()
	pm := l.policyMaps[id]
	delete(l.policyMaps, id)
	l.mu.Unlock()
	var errs []error
	if pm != nil {
		errs = append(errs, pm.Close())
	}
	errs = append(errs, policymap.Remove(l.root, id))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("delete policy map of endpoint %d: %w", id, err)
	}
	return nil
}

func (l *Loader) cachedPolicyMap(id uint16) (*policymap.Map, error) {
	if id == 0 {
		return nil, fmt.Errorf("policy map: endpoint id must be 1..65535")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if pm := l.policyMaps[id]; pm != nil {
		return pm, nil
	}
	pm, err := l.PolicyMap(id)
	if err != nil {
		return nil, err
	}
	l.policyMaps[id] = pm
	return pm, nil
}
