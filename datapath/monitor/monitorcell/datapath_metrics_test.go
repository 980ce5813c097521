package monitorcell_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

type collectors struct {
	cell.In

	Collectors []prometheus.Collector `group:"metrics"`
}

// TestDatapathCountersUnderCiliumNames: packets run through the programs
// are counted in cilium_forward_* and cilium_drop_* with Cilium's labels.
func TestDatapathCountersUnderCiliumNames(t *testing.T) {
	var cs collectors
	a := monitortest.StartWith(t, nil, celltest.Capture(&cs))
	s := a.NewScene(t)
	if v := s.Ingress(t, s.AllowedTCP()); v != monitortest.ActOK {
		t.Fatalf("allowed flow: verdict %d", v)
	}
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs.Collectors {
		reg.MustRegister(c)
	}
	// Both test frames are 54 bytes (Ethernet, IPv4, TCP, no payload).
	want := `
# HELP cilium_drop_count_total Total dropped packets, tagged by drop reason and ingress/egress direction
# TYPE cilium_drop_count_total counter
cilium_drop_count_total{direction="INGRESS",reason="Policy denied"} 1
# HELP cilium_forward_count_total Total forwarded packets, tagged by ingress/egress direction
# TYPE cilium_forward_count_total counter
cilium_forward_count_total{direction="INGRESS"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "cilium_drop_count_total", "cilium_forward_count_total"); err != nil {
		t.Error(err)
	}
	n, err := testutil.GatherAndCount(reg, "cilium_drop_bytes_total", "cilium_forward_bytes_total")
	if err != nil || n != 2 {
		t.Errorf("byte counters: %d series (%v), want 2", n, err)
	}
}
