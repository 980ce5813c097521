package policymap

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

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
// written (*datapath.PolicyMapFullError): the endpoint keeps its previous
// policy. The writes go in an order that never opens more than either the old or the
// new policy allows: new denies, then removal of old allows, then new
// allows, then removal of old denies.
func (m *Map) Sync(desired policy.MapState) (added, removed int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want, err := Translate(desired)
	if err != nil {
		return 0, 0, fmt.Errorf("sync policy map of endpoint %d: %w", m.epID, err)
	}
	if max := m.m.MaxEntries(); len(want) > int(max) {
		return 0, 0, m.fullError(len(want))
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
	// In trie order the insertions walk shared paths (fewer cache misses
	// than a Go map's random order); it matters for large writes.
	sortByTrieOrder(p.addDeny, p.addDenyV)
	sortByTrieOrder(p.addAllow, p.addAllowV)
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

// sortByTrieOrder sorts keys in the order of their bits in the LPM trie
// (identity and port in network byte order), values along.
func sortByTrieOrder(keys []Key, values []Value) {
	if len(keys) < 64 {
		return
	}
	type entry struct {
		bits uint64
		plen uint32
		i    int
	}
	es := make([]entry, len(keys))
	for i, k := range keys {
		es[i] = entry{
			bits: uint64(bits.ReverseBytes32(k.Identity))<<32 | uint64(k.Direction)<<24 | uint64(k.Proto)<<16 | uint64(k.PortHost()),
			plen: k.Prefixlen,
			i:    i,
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		if c := cmp.Compare(a.bits, b.bits); c != 0 {
			return c
		}
		return cmp.Compare(a.plen, b.plen)
	})
	sk, sv := slices.Clone(keys), slices.Clone(values)
	for i, e := range es {
		keys[i], values[i] = sk[e.i], sv[e.i]
	}
}
