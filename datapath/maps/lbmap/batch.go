package lbmap

import (
	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// bulkChunk is how many entries one batch write of createBulk takes at
// most: an initial sync's slots and backends go in chunks written from
// arrays reused chunk after chunk, not from arrays holding all of them
// (100,000 entries: megabytes allocated for one write). Larger chunks
// save little; the syscall per chunk is a few microseconds.
const bulkChunk = 4096

// batch is a typed batch of map writes.
type batch[K, V any] struct {
	keys   []K
	values []V
}

// presize makes room for n entries.
func (b *batch[K, V]) presize(n int) {
	b.keys, b.values = make([]K, 0, n), make([]V, 0, n)
}

func (b *batch[K, V]) add(k K, v V) {
	b.keys = append(b.keys, k)
	b.values = append(b.values, v)
}

// full reports whether the batch holds a chunk.
func (b *batch[K, V]) full() bool { return len(b.keys) >= bulkChunk }

// reset empties the batch, keeping its room.
func (b *batch[K, V]) reset() {
	b.keys, b.values = b.keys[:0], b.values[:0]
}

// write writes the batch; it returns how many entries, from the first,
// were written.
func (b *batch[K, V]) write(m *ebpf.Map) (int, error) {
	return bpfmap.BatchUpdate(m, bpfmap.Raw[K](b.keys), bpfmap.Raw[V](b.values))
}

// svcBatch are service-map writes of both families.
type svcBatch struct {
	v4 batch[Service4Key, ServiceValue]
	v6 batch[Service6Key, ServiceValue]
}

func (b *svcBatch) add(fe *addrKey, slot uint16, v ServiceValue) {
	if fe.is4() {
		b.v4.add(service4Key(fe, slot), v)
	} else {
		b.v6.add(service6Key(fe, slot), v)
	}
}

// presize makes room for a chunk of IPv4 entries (the common case).
func (b *svcBatch) presize() { b.v4.presize(bulkChunk) }

// flush writes the entries when a family's batch holds a chunk (all:
// whatever it holds) and empties it.
func (b *svcBatch) flush(m *Maps, all bool) error {
	if all || b.v4.full() {
		_, err := b.v4.write(m.svc4)
		b.v4.reset()
		if err != nil {
			return err
		}
	}
	if all || b.v6.full() {
		_, err := b.v6.write(m.svc6)
		b.v6.reset()
		return err
	}
	return nil
}
