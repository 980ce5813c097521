package lbmap

// stableSlots returns the slot order (slot i+1 -> backend id) for the
// active backends active, changing as few slots of old as it can: a
// backend keeps its slot, a new one takes a freed slot, and freed slots
// left over are filled from the end.
func stableSlots(old, active []uint32) []uint32 {
	want := make(map[uint32]bool, len(active))
	for _, id := range active {
		want[id] = true
	}
	out := make([]uint32, 0, max(len(old), len(active)))
	placed := make(map[uint32]bool, len(active))
	for _, id := range old {
		if want[id] && !placed[id] {
			placed[id] = true
			out = append(out, id)
		} else {
			out = append(out, 0)
		}
	}
	var fresh []uint32
	for _, id := range active {
		if !placed[id] {
			placed[id] = true
			fresh = append(fresh, id)
		}
	}
	for i := range out {
		if out[i] == 0 && len(fresh) > 0 {
			out[i], fresh = fresh[0], fresh[1:]
		}
	}
	out = append(out, fresh...)
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
