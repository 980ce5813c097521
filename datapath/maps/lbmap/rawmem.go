package lbmap

import (
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
)

// The writer hands its keys and values to cilium/ebpf as raw memory:
// an unsafe.Pointer for one entry, a bpfmap.Raw for a batch. Given a
// typed pointer or slice, cilium/ebpf checks its layout with reflection
// and encoding/binary (a sync.Map lookup and more) on every call, about
// a tenth of a one-endpoint change. The types are plain memory without
// padding (every gap is a named Pad field) and checkSizes compares their
// sizes with the maps' when the maps open, so the memory is exactly what
// the kernel reads.

// rawSize is the key and value size of one of the writer's maps.
type rawSize struct {
	m          *ebpf.Map
	key, value uintptr
}

// checkSizes fails when a map's key or value size is not that of the Go
// type the writer hands it as raw memory.
func (m *Maps) checkSizes() error {
	for _, s := range []rawSize{
		{m.svc4, unsafe.Sizeof(Service4Key{}), unsafe.Sizeof(ServiceValue{})},
		{m.svc6, unsafe.Sizeof(Service6Key{}), unsafe.Sizeof(ServiceValue{})},
		{m.be4, unsafe.Sizeof(uint32(0)), unsafe.Sizeof(Backend4Value{})},
		{m.be6, unsafe.Sizeof(uint32(0)), unsafe.Sizeof(Backend6Value{})},
		{m.rev4, unsafe.Sizeof(uint16(0)), unsafe.Sizeof(RevNAT4Value{})},
		{m.rev6, unsafe.Sizeof(uint16(0)), unsafe.Sizeof(RevNAT6Value{})},
		{m.match, unsafe.Sizeof(AffinityMatchKey{}), 1},
	} {
		if uintptr(s.m.KeySize()) != s.key || uintptr(s.m.ValueSize()) != s.value {
			return fmt.Errorf("map %s: key and value of %d and %d bytes, want %d and %d",
				s.m, s.m.KeySize(), s.m.ValueSize(), s.key, s.value)
		}
	}
	return nil
}
