package lbmap_test

import (
	"fmt"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// BenchmarkReconcileFromEmpty writes 5000 services of 10 backends (each
// backend shared by two services) into empty maps.
func BenchmarkReconcileFromEmpty(b *testing.B) {
	var svcs []datapath.LBService
	for i := range 5000 {
		var backends []string
		for j := range 10 {
			k := (i*10 + j) % 25000
			backends = append(backends, fmt.Sprintf("10.1.%d.%d:8080", k>>8, k&0xff))
		}
		svcs = append(svcs, svc(fmt.Sprintf("10.96.%d.%d:80", i>>8, i&0xff), backends...))
	}
	for b.Loop() {
		b.StopTimer()
		w, _ := open(b, bpfmaptest.Root(b))
		b.StartTimer()
		if _, _, err := w.ReconcileServices(svcs); err != nil {
			b.Fatal(err)
		}
	}
}
