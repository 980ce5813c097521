package bpfmap

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/cilium/ebpf"
)

// BatchUpdate writes keys[i] -> values[i] (slices of equal length) with
// one BPF_MAP_UPDATE_BATCH where the map type supports it, else one update
// per entry. It returns how many entries were written.
func BatchUpdate(m *ebpf.Map, keys, values any) (int, error) {
	kv, vv := reflect.ValueOf(keys), reflect.ValueOf(values)
	if kv.Len() != vv.Len() {
		return 0, fmt.Errorf("update batch: %d keys but %d values", kv.Len(), vv.Len())
	}
	switch kv.Len() {
	case 0:
		return 0, nil
	case 1: // one syscall either way; the plain update skips the batch marshalling
		// Pointers into the slices: cilium/ebpf copies them without reflection.
		if err := m.Update(kv.Index(0).Addr().Interface(), vv.Index(0).Addr().Interface(), ebpf.UpdateAny); err != nil {
			return 0, fmt.Errorf("update entry: %w", err)
		}
		return 1, nil
	}
	n, err := m.BatchUpdate(keys, values, nil)
	if !errors.Is(err, ebpf.ErrNotSupported) {
		if err != nil {
			return n, fmt.Errorf("update batch: %w", err)
		}
		return n, nil
	}
	for i := 0; i < kv.Len(); i++ {
		if err := m.Update(kv.Index(i).Addr().Interface(), vv.Index(i).Addr().Interface(), ebpf.UpdateAny); err != nil {
			return i, fmt.Errorf("update entry: %w", err)
		}
	}
	return kv.Len(), nil
}

// BatchDelete deletes keys (a slice) with one BPF_MAP_DELETE_BATCH where
// supported, else one delete per key; keys already absent are not an
// error. It returns how many keys were deleted.
func BatchDelete(m *ebpf.Map, keys any) (int, error) {
	kv := reflect.ValueOf(keys)
	switch kv.Len() {
	case 0:
		return 0, nil
	case 1:
		err := m.Delete(kv.Index(0).Addr().Interface())
		switch {
		case err == nil:
			return 1, nil
		case errors.Is(err, ebpf.ErrKeyNotExist):
			return 0, nil
		}
		return 0, fmt.Errorf("delete entry: %w", err)
	}
	n, err := m.BatchDelete(keys, nil)
	if err == nil {
		return n, nil
	}
	// Not supported, or a key was missing (the batch stops there): go on
	// one key at a time.
	if !errors.Is(err, ebpf.ErrNotSupported) && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return n, fmt.Errorf("delete batch: %w", err)
	}
	deleted := n // the batch's first n deletes happened
	for i := 0; i < kv.Len(); i++ {
		err := m.Delete(kv.Index(i).Addr().Interface())
		switch {
		case err == nil:
			deleted++
		case errors.Is(err, ebpf.ErrKeyNotExist):
		default:
			return deleted, fmt.Errorf("delete entry: %w", err)
		}
	}
	return deleted, nil
}
