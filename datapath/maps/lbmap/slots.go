package lbmap

import (
	"slices"
)

// stableSlots returns, in out's room, the slot order (slot i+1 ->
// backend id) for the active backends active, changing as few slots of
// old as it can: a backend keeps its slot, a new one takes a freed slot,
// and freed slots left over are filled from the end. A few backends are
// looked up by scanning slices, many in maps.
func stableSlots(out, old, active []uint32) []uint32 {
	want := newIDSet(active, func(id uint32) uint32 { return id })
	var placed map[uint32]struct{}
	if len(active) > smallSet {
		placed = make(map[uint32]struct{}, len(active))
	}
	isPlaced := func(id uint32) bool {
		if placed != nil {
			_, ok := placed[id]
			return ok
		}
		return slices.Contains(out, id)
	}
	out = out[:0]
	for _, id := range old {
		if id != 0 && want.has(id) && !isPlaced(id) {
			if placed != nil {
				placed[id] = struct{}{}
			}
			out = append(out, id)
		} else {
			out = append(out, 0)
		}
	}
	var fresh []uint32
	for _, id := range active {
		if !isPlaced(id) {
			fresh = append(fresh, id)
		}
	}
	return fillSlots(out, fresh)
}

// fillSlots puts the ids fresh into the holes (0) of out, in order,
// appends those left over, and fills the holes left with the last slots.
func fillSlots(out, fresh []uint32) []uint32 {
	hole := 0
	for _, id := range fresh {
		for hole < len(out) && out[hole] != 0 {
			hole++
		}
		if hole < len(out) {
			out[hole] = id
		} else {
			out = append(out, id)
		}
	}
	for i := 0; i < len(out); {
		if out[i] != 0 {
			i++
			continue
		}
		last := len(out) - 1
		out[i] = out[last]
		out = out[:last]
	}
	return out
}

// changedSlots is stableSlots for an upsert that knows what changed:
// old is exactly the previous active backends; the leaving ones free
// their slots, the joining ones take them in the service's order. It
// costs a scan of old per leaving backend, nothing per unchanged one.
func (x *upsertScratch) changedSlots(old []uint32) []uint32 {
	out := append(x.slots[:0], old...)
	for _, id := range x.leaving {
		if i := slices.Index(out, id); i >= 0 {
			out[i] = 0
		}
	}
	if len(x.joining) > 1 {
		slices.SortFunc(x.joining, func(a, b joiner) int { return int(a.pos) - int(b.pos) })
	}
	x.fresh = x.fresh[:0]
	for _, j := range x.joining {
		x.fresh = append(x.fresh, j.id)
	}
	out = fillSlots(out, x.fresh)
	x.slots = out
	return out
}
