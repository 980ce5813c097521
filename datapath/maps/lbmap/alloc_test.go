//go:build !race

package lbmap_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestOneChangeAllocatesNothing: once a service's change has been made
// before, adding a backend to it and taking it away again allocates
// nothing (the writer reuses its scratch room and backend records).
// Not under the race detector, which allocates on its own.
func TestOneChangeAllocatesNothing(t *testing.T) {
	w, _ := open(t, bpfmaptest.Root(t))
	var backends []string
	for j := range 10 {
		backends = append(backends, fmt.Sprintf("10.0.1.%d:80", j+1))
	}
	small := svc("10.96.0.10:80", backends...)
	grown := svc("10.96.0.10:80", append(backends, "10.0.2.1:80")...)
	if err := w.UpsertService(small); err != nil {
		t.Fatal(err)
	}
	i := 0
	change := func() { // grown, then small again
		s := grown
		if i%2 == 1 {
			s = small
		}
		if err := w.UpsertService(s); err != nil {
			t.Fatal(err)
		}
		i++
	}
	allocs := testing.AllocsPerRun(100, change)
	if allocs != 0 {
		t.Errorf("%.1f allocations per change, want 0", allocs)
	}
	// Over many changes the new backend's id walks through the id space
	// (ids are reused as late as possible): the writer's id pages are
	// made once each, not once per change (AllocsPerRun rounds an
	// allocation every few changes down to 0).
	const changes = 2000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range changes {
		change()
	}
	runtime.ReadMemStats(&after)
	// The count is the process's: a goroutine of the test framework or
	// the runtime may allocate meanwhile (10 was seen once). One
	// allocation per change would be 2,000; a few per id page is fine.
	if n := after.Mallocs - before.Mallocs; n > 40 {
		t.Errorf("%d allocations in %d changes, want at most 40", n, changes)
	}
}
