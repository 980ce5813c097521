package lbmap

import "unsafe"

// keyBuf holds the key and value of one map call of the writer (under
// its lock): ebpf.Map takes them as pointers in interfaces, and the
// address of a field here costs nothing where a new value per call is an
// allocation. The pointers are unsafe.Pointers (rawmem.go).
type keyBuf struct {
	svc4 Service4Key
	svc6 Service6Key
	id   uint32
	be4  Backend4Value
	be6  Backend6Value
}

// service returns the key of frontend fe's slot.
func (b *keyBuf) service(fe *addrKey, slot uint16) unsafe.Pointer {
	if fe.is4() {
		b.svc4 = service4Key(fe, slot)
		return unsafe.Pointer(&b.svc4)
	}
	b.svc6 = service6Key(fe, slot)
	return unsafe.Pointer(&b.svc6)
}

// backendID returns id.
func (b *keyBuf) backendID(id uint32) unsafe.Pointer {
	b.id = id
	return unsafe.Pointer(&b.id)
}

// backend returns e's value in its family's map.
func (b *keyBuf) backend(e backendEntry) unsafe.Pointer {
	if e.addr.is4() {
		b.be4 = backend4Value(e)
		return unsafe.Pointer(&b.be4)
	}
	b.be6 = backend6Value(e)
	return unsafe.Pointer(&b.be6)
}
