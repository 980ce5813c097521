package svcmanagercell_test

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

const lbRanges = `services:
- metadata: {name: web, namespace: shop}
  spec:
    type: LoadBalancer
    clusterIP: 10.96.0.30
    loadBalancerSourceRanges: [10.0.0.0/8]
    externalIPs: [198.51.100.7]
    ports: [{port: 80, nodePort: 30090}]
  status:
    loadBalancer: {ingress: [{ip: 172.16.1.1}]}
`

// startWithOption starts the cell with lbRanges in the state file and
// flag, and returns the LoadBalancer frontend as written and the
// writer.
func startWithOption(t *testing.T, flag string) (datapath.LBService, *svcmanagertest.Writer) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "state.yaml")
	celltest.ReplaceFile(t, file, lbRanges)
	w := svcmanagertest.New()
	celltest.StartWithFlags(t, []string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file, flag},
		localnode.Cell, status.Cell, svcmanagercell.Cell, cell.Provide(func() datapath.LBMapWriter { return w }))
	fe := datapath.L3n4Addr{Addr: netip.MustParseAddr("172.16.1.1"), Port: 80, Proto: datapath.ProtoTCP}
	celltest.Eventually(t, "the LoadBalancer frontend written", func() bool { _, ok := w.Get(fe); return ok })
	lb, _ := w.Get(fe)
	return lb, w
}

// TestSourceRangeCheckFlag: with --enable-svc-source-range-check=false
// the LoadBalancer frontend is written without its source ranges
// (default: with them).
func TestSourceRangeCheckFlag(t *testing.T) {
	for _, on := range []bool{true, false} {
		got, _ := startWithOption(t, fmt.Sprintf("enable-svc-source-range-check=%v", on))
		if want := on; (len(got.SourceRanges) == 1) != want {
			t.Errorf("--enable-svc-source-range-check=%v: source ranges %v", on, got.SourceRanges)
		}
	}
}

// TestExternalIPsFlag: with --enable-external-ips=false the Service's
// external IP gets no frontend (default: it does), its LoadBalancer one
// still does.
func TestExternalIPsFlag(t *testing.T) {
	for _, on := range []bool{true, false} {
		_, w := startWithOption(t, fmt.Sprintf("enable-external-ips=%v", on))
		_, ok := w.Get(datapath.L3n4Addr{Addr: netip.MustParseAddr("198.51.100.7"), Port: 80, Proto: datapath.ProtoTCP})
		if ok != on {
			t.Errorf("--enable-external-ips=%v: the external IP's frontend written %v", on, ok)
		}
	}
}
