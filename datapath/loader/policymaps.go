package loader

import (
	"errors"
	"fmt"

	policymap "github.com/apiary-net/apiary/datapath/maps/policy"
	"github.com/apiary-net/apiary/policy"
)

// The policy-map writer: endpoints' map states written to their pinned
// policy maps. The loader keeps each endpoint's map open between calls so
// ApplyPolicyMapChanges can write increments against the last sync.

// SyncPolicyMap makes endpoint id's policy map (created if missing) hold
// exactly desired, writing only the difference; see policymap.Map.Sync.
// A state larger than the map is refused with a *policymap.TooLargeError
// and the map is left as it was.
func (l *Loader) SyncPolicyMap(id uint16, desired policy.MapState) (added, removed int, err error) {
	pm, err := l.cachedPolicyMap(id)
	if err != nil {
		return 0, 0, err
	}
	return pm.Sync(desired)
}

// ApplyPolicyMapChanges writes incremental changes to endpoint id's
// policy map, relative to its last SyncPolicyMap in this process
// (policymap.ErrNoBaseline without one); see policymap.Map.Apply.
func (l *Loader) ApplyPolicyMapChanges(id uint16, changes policy.MapChanges) error {
	pm, err := l.cachedPolicyMap(id)
	if err != nil {
		return err
	}
	_, _, err = pm.Apply(changes)
	return err
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
