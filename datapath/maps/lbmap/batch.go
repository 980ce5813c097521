package lbmap

import (
	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

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

// write writes the batch; it returns how many entries, from the first,
// were written.
func (b *batch[K, V]) write(m *ebpf.Map) (int, error) {
	return bpfmap.BatchUpdate(m, rawSlice[K](b.keys), rawSlice[V](b.values))
}

// svcBatch are service-map writes of both families.
type svcBatch struct {
	v4 batch[Service4Key, ServiceValue]
	v6 batch[Service6Key, ServiceValue]
}

func (b *svcBatch) add(fe datapath.L3n4Addr, slot uint16, v ServiceValue) {
	if fe.Addr.Is4() {
		b.v4.add(service4Key(fe, slot), v)
	} else {
		b.v6.add(service6Key(fe, slot), v)
	}
}

func (b *svcBatch) write(m *Maps) error {
	if _, err := b.v4.write(m.svc4); err != nil {
		return err
	}
	_, err := b.v6.write(m.svc6)
	return err
}
