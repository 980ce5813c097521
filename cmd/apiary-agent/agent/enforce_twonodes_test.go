package agent_test

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	ipcachemap "github.com/apiary-net/apiary/datapath/maps/ipcache"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
)

// TestEnforcementAcrossNodes runs two agents on one etcd, each with its
// datapath in a node namespace, the namespaces joined by a veth and
// routed with --auto-direct-node-routes. Pods a and x live on node A,
// pod b on node B; b admits a only. Node B's BPF ipcache map learns a's
// and x's identities from node A's kvstore entries, so a reaches b and
// x is dropped at b's ingress.
func TestEnforcementAcrossNodes(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	policyDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(policyDir, "policy.yaml"), []byte(enforcePolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	na := node{name: "node-a", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: policyDir, ip: "192.168.60.1", podCIDR: "10.0.1.0/24"}
	nb := node{name: "node-b", ns: netnstest.New(t, "apiary-node"), stateDir: t.TempDir(), bpfRoot: bpfmaptest.Root(t),
		policyDir: policyDir, ip: "192.168.60.2", podCIDR: "10.0.2.0/24"}
	netnstest.Join(t, na.ns, nb.ns, netip.MustParseAddr(na.ip), netip.MustParseAddr(nb.ip))
	ca, _ := startNode(t, na, srv, "auto-direct-node-routes")
	cb, _ := startNode(t, nb, srv, "auto-direct-node-routes")

	podA, podX, podB := netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")
	epA := createEndpoint(t, ca, 1, podA, "a")
	epX := createEndpoint(t, ca, 2, podX, "x")
	epB := createEndpoint(t, cb, 1, podB, "b")
	ipA, ipX, ipB := addrOf(t, epA), addrOf(t, epX), addrOf(t, epB)
	serve(t, podB, ipB, 8080)

	m, err := ipcachemap.Open(celltest.Logger(t), nb.bpfRoot)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, ep := range []struct {
		ip netip.Addr
		id uint32
	}{{ipA, epA.Identity}, {ipX, epX.Identity}} {
		celltest.Eventually(t, "node B's ipcache map has "+ep.ip.String(), func() bool {
			got, ok, err := m.Lookup(ep.ip)
			return err == nil && ok && got == identity.NumericIdentity(ep.id)
		})
	}
	dump, err := m.Dump()
	if err != nil {
		t.Fatal(err)
	}
	if e := dump[netip.PrefixFrom(ipA, 32)]; e.TunnelPeer != netip.MustParseAddr(na.ip) {
		t.Errorf("node B's ipcache map entry of %s: %+v, want tunnel peer %s", ipA, e, na.ip)
	}

	celltest.Eventually(t, "a on node A reaches b on node B", func() bool {
		return netnstest.Dial(podA, ipB, 8080, time.Second) == nil
	})
	wantTCP(t, podX, ipB, 8080, false)
	wantTCP(t, podA, ipB, 8080, true)
}
