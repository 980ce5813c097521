package bench

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// LBEntries4 are entries of the IPv4 load-balancing maps in lbmap's
// layout: what the benchmarks' raw side writes where the lbmap writer
// syncs.
type LBEntries4 struct {
	SvcKeys []lbmap.Service4Key
	SvcVals []lbmap.ServiceValue
	BeKeys  []uint32
	BeVals  []lbmap.Backend4Value
	RevKeys []uint16
	RevVals []lbmap.RevNAT4Value
}

// Write writes the entries in the order the writer keeps (backends,
// rev-NAT entries, then slots and master entries), one batch update per
// map (one update per entry where the kernel has no batch updates).
func (e *LBEntries4) Write(backends, revNAT, services *ebpf.Map) error {
	if err := RawUpdate(backends, e.BeKeys, e.BeVals); err != nil {
		return fmt.Errorf("write backends: %w", err)
	}
	if err := RawUpdate(revNAT, e.RevKeys, e.RevVals); err != nil {
		return fmt.Errorf("write rev-NAT entries: %w", err)
	}
	if err := RawUpdate(services, e.SvcKeys, e.SvcVals); err != nil {
		return fmt.Errorf("write services: %w", err)
	}
	return nil
}

// RawUpdate writes keys[i] -> values[i] the fastest raw way: one batch
// update of the slices' memory (bpfmap.Raw), or one update per entry where the
// kernel has no batch updates.
func RawUpdate[K, V any](m *ebpf.Map, keys []K, values []V) error {
	if _, err := m.BatchUpdate(bpfmap.Raw[K](keys), bpfmap.Raw[V](values), nil); !errors.Is(err, ebpf.ErrNotSupported) {
		return err
	}
	for i := range keys {
		if err := m.Update(unsafe.Pointer(&keys[i]), unsafe.Pointer(&values[i]), ebpf.UpdateAny); err != nil {
			return err
		}
	}
	return nil
}
