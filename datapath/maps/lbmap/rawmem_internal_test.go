package lbmap

import (
	"strings"
	"testing"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestCheckSizesRefusesOtherLayouts: the writer hands its keys and
// values to the kernel as raw memory, so maps whose key or value size
// is not its types' are refused, naming the map.
func TestCheckSizesRefusesOtherLayouts(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	var m Maps
	dst := m.fields()
	for i, name := range MapNames {
		spec, err := Spec(name, 16)
		if err != nil {
			t.Fatal(err)
		}
		if name == Backends6Name {
			spec = spec.Copy()
			spec.ValueSize += 4
		}
		em, err := ebpf.NewMap(spec)
		if err != nil {
			t.Fatal(err)
		}
		*dst[i] = em
	}
	t.Cleanup(func() { m.Close() })
	err := m.checkSizes()
	if err == nil || !strings.Contains(err.Error(), Backends6Name) {
		t.Fatalf("checkSizes = %v, want an error naming %s", err, Backends6Name)
	}
	// The same maps with the programs' layout pass.
	m.be6.Close()
	spec, _ := Spec(Backends6Name, 16)
	if m.be6, err = ebpf.NewMap(spec); err != nil {
		t.Fatal(err)
	}
	if err := m.checkSizes(); err != nil {
		t.Fatal(err)
	}
}

// TestRevNATSet: reserved rev-NAT indexes are found until cleared,
// the others never; 0 and the top index included.
func TestRevNATSet(t *testing.T) {
	var r revNATSet
	for _, idx := range []uint16{0, 1, 63, 64, 4097, maxRevNATIndex} {
		r.add(idx)
	}
	for _, tt := range []struct {
		idx  uint16
		want bool
	}{{0, true}, {1, true}, {2, false}, {63, true}, {64, true}, {65, false}, {4097, true}, {4096, false}, {maxRevNATIndex, true}, {maxRevNATIndex - 1, false}} {
		if got := r.has(tt.idx); got != tt.want {
			t.Errorf("has(%d) = %v, want %v", tt.idx, got, tt.want)
		}
	}
	r.clear()
	for _, idx := range []uint16{0, 1, 63, 64, 4097, maxRevNATIndex} {
		if r.has(idx) {
			t.Errorf("has(%d) after clear", idx)
		}
	}
}
