package policy

import (
	"fmt"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/policy"
)

// Sync makes the map hold the translation of desired (it reads the map,
// so it also repairs a map changed behind the agent's back), writing only the
// entries that are missing or whose verdict differs and deleting the
// entries desired lacks; counters are not compared. It returns how many
// entries it wrote and deleted.
//
// A desired state larger than the map is refused before anything is
// written (ErrTooLarge): the endpoint keeps its previous policy. The
// writes go in an order that never opens more than either the old or the
// new policy allows: new denies, then removal of old allows, then new
// allows, then removal of old denies.
func (m *Map) Sync(desired policy.MapState) (added, removed int, err error) {
	want, err := Translate(desired)
	if err != nil {
		return 0, 0, fmt.Errorf("sync policy map of endpoint %d: %w", m.epID, err)
	}
	if max := m.m.MaxEntries(); len(want) > int(max) {
		return 0, 0, fmt.Errorf("sync policy map of endpoint %d: %d entries, the map holds %d (raise --bpf-policy-map-max): %w",
			m.epID, len(want), max, ErrTooLarge)
	}
	have, err := m.dumpRaw()
	if err != nil {
		return 0, 0, err
	}
	var plan syncPlan
	for k, e := range want {
		if v, ok := have[k]; ok && entryOf(v) == e {
			continue
		}
		plan.add(k, e)
	}
	for k, v := range have {
		if _, ok := want[k]; !ok {
			plan.remove(k, entryOf(v))
		}
	}
	if err := plan.apply(m); err != nil {
		m.shadow = nil
		return 0, 0, fmt.Errorf("sync policy map of endpoint %d: %w", m.epID, err)
	}
	m.shadow = newShadow(desired, want)
	return len(plan.addDeny) + len(plan.addAllow), len(plan.delDeny) + len(plan.delAllow), nil
}

// syncPlan is a diff split by verdict so it can be applied in a safe
// order.
type syncPlan struct {
	addDeny, addAllow   []Key
	addDenyV, addAllowV []Value
	delDeny, delAllow   []Key
}

func (p *syncPlan) add(k Key, e Entry) {
	if e.Deny {
		p.addDeny, p.addDenyV = append(p.addDeny, k), append(p.addDenyV, e.value())
	} else {
		p.addAllow, p.addAllowV = append(p.addAllow, k), append(p.addAllowV, e.value())
	}
}

func (p *syncPlan) remove(k Key, old Entry) {
	if old.Deny {
		p.delDeny = append(p.delDeny, k)
	} else {
		p.delAllow = append(p.delAllow, k)
	}
}

func (p *syncPlan) apply(m *Map) error {
	if _, err := bpfmap.BatchUpdate(m.m, p.addDeny, p.addDenyV); err != nil {
		return err
	}
	if _, err := bpfmap.BatchDelete(m.m, p.delAllow); err != nil {
		return err
	}
	if _, err := bpfmap.BatchUpdate(m.m, p.addAllow, p.addAllowV); err != nil {
		return err
	}
	if _, err := bpfmap.BatchDelete(m.m, p.delDeny); err != nil {
		return err
	}
	return nil
}
