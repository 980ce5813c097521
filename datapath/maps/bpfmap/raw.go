package bpfmap

import "unsafe"

// Raw is a batch of keys or values that cilium/ebpf takes as the bytes
// of its backing array (an encoding.BinaryMarshaler, not copied). Given
// a typed slice, cilium/ebpf checks its layout with reflection and
// encoding/binary on every call. T must be plain memory without padding
// of exactly the map's key or value size (check it when the map opens).
type Raw[T any] []T

// MarshalBinary returns the bytes of s's elements, not a copy.
func (s Raw[T]) MarshalBinary() ([]byte, error) {
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero))), nil
}
