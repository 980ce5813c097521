package lbmap

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// slotBatchMax is how many service-map entries one slotBatch write
// takes; more go in several writes, in order.
const slotBatchMax = 32

// slotBatch is the service-map writes of one upsert (its changed slots,
// then its master entry) as one BPF_MAP_UPDATE_BATCH: the kernel
// writes a batch's entries in order, so the programs still never see a
// master entry whose count covers a slot not written yet, and a
// one-endpoint change costs two syscalls (backend, then slot and
// master), not three. The writer reuses it; the slices handed to
// cilium/ebpf are boxed once per length (boxing a slice allocates).
type slotBatch struct {
	n     int
	slots [slotBatchMax]uint16 // slot of each entry (0: master)
	k4    [slotBatchMax]Service4Key
	k6    [slotBatchMax]Service6Key
	v     [slotBatchMax]ServiceValue
	// Boxed k4[:n], k6[:n], v[:n] by n, as bpfmap.Raws.
	keys4, keys6, values [slotBatchMax + 1]any
}

// add appends fe's slot with value v; false when the batch is full.
func (b *slotBatch) add(fe *addrKey, slot uint16, v ServiceValue) bool {
	if b.n == slotBatchMax {
		return false
	}
	if fe.is4() {
		b.k4[b.n] = service4Key(fe, slot)
	} else {
		b.k6[b.n] = service6Key(fe, slot)
	}
	b.slots[b.n], b.v[b.n] = slot, v
	b.n++
	return true
}

// write writes the batch into m (the map of fe's family) and empties
// it; it returns how many entries, from the first, were written, and
// an error naming the entry that failed.
func (b *slotBatch) write(m *ebpf.Map, v4 bool) (int, error) {
	n := b.n
	b.n = 0
	if n == 0 {
		return 0, nil
	}
	var done int
	var err error
	if n == 1 { // a plain update skips the batch's marshalling
		key := unsafe.Pointer(&b.k6[0])
		if v4 {
			key = unsafe.Pointer(&b.k4[0])
		}
		if err = m.Update(key, unsafe.Pointer(&b.v[0]), ebpf.UpdateAny); err == nil {
			done = 1
		}
	} else {
		done, err = bpfmap.BatchUpdate(m, b.boxed(n, v4), b.boxedV(n))
	}
	if err != nil {
		if slot := b.slots[min(done, n-1)]; slot != 0 {
			return done, fmt.Errorf("write backend slot %d: %w", slot, err)
		}
		return done, fmt.Errorf("write master entry: %w", err)
	}
	return done, nil
}

// boxed returns k4[:n] (v4) or k6[:n] as a bpfmap.Raw in an interface.
func (b *slotBatch) boxed(n int, v4 bool) any {
	if v4 {
		if b.keys4[n] == nil {
			b.keys4[n] = bpfmap.Raw[Service4Key](b.k4[:n])
		}
		return b.keys4[n]
	}
	if b.keys6[n] == nil {
		b.keys6[n] = bpfmap.Raw[Service6Key](b.k6[:n])
	}
	return b.keys6[n]
}

// boxedV returns v[:n] as a bpfmap.Raw in an interface.
func (b *slotBatch) boxedV(n int) any {
	if b.values[n] == nil {
		b.values[n] = bpfmap.Raw[ServiceValue](b.v[:n])
	}
	return b.values[n]
}
