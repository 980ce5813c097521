package noderoute_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/noderoute"
)

func mkNode(name, ip, cidr4, ip6, cidr6 string) node.Node {
	n := node.Node{Name: name, Cluster: "c1"}
	if ip != "" {
		n.IPAddresses = append(n.IPAddresses, node.Address{Type: node.NodeInternalIP, IP: netip.MustParseAddr(ip)})
	}
	if ip6 != "" {
		n.IPAddresses = append(n.IPAddresses, node.Address{Type: node.NodeInternalIP, IP: netip.MustParseAddr(ip6)})
	}
	if cidr4 != "" {
		n.IPv4AllocCIDR = netip.MustParsePrefix(cidr4)
	}
	if cidr6 != "" {
		n.IPv6AllocCIDR = netip.MustParsePrefix(cidr6)
	}
	return n
}

func TestHandlerRoutes(t *testing.T) {
	f := datapathtest.New()
	local := localnode.NewStore(localnode.LocalNode{Name: "a", Cluster: cluster.Info{ClusterName: "c1"}})
	h := noderoute.New(f, local, celltest.Logger(t))
	want := func(what string, routes map[string]string) {
		t.Helper()
		got := map[string]string{}
		for c, ip := range f.Routes() {
			got[c.String()] = ip.String()
		}
		if len(got) != len(routes) {
			t.Fatalf("%s: routes %v, want %v", what, got, routes)
		}
		for c, ip := range routes {
			if got[c] != ip {
				t.Fatalf("%s: routes %v, want %v", what, got, routes)
			}
		}
	}
	if err := h.NodeAdd(mkNode("a", "192.0.2.1", "10.0.1.0/24", "", "")); err != nil {
		t.Fatal(err)
	}
	want("local node", map[string]string{})
	b := mkNode("b", "192.0.2.2", "10.0.2.0/24", "2001:db8::2", "fd00:2::/64")
	if err := h.NodeAdd(b); err != nil {
		t.Fatal(err)
	}
	want("node b", map[string]string{"10.0.2.0/24": "192.0.2.2", "fd00:2::/64": "2001:db8::2"})
	// Same cluster-local name in another cluster is another node.
	other := mkNode("a", "192.0.2.9", "10.9.1.0/24", "", "")
	other.Cluster = "c2"
	if err := h.NodeAdd(other); err != nil {
		t.Fatal(err)
	}
	want("node c2/a", map[string]string{"10.0.2.0/24": "192.0.2.2", "fd00:2::/64": "2001:db8::2", "10.9.1.0/24": "192.0.2.9"})
	b2 := mkNode("b", "192.0.2.3", "10.0.3.0/24", "", "")
	if err := h.NodeUpdate(b, b2); err != nil {
		t.Fatal(err)
	}
	want("node b moved", map[string]string{"10.0.3.0/24": "192.0.2.3", "10.9.1.0/24": "192.0.2.9"})
	if err := h.NodeDelete(b2); err != nil {
		t.Fatal(err)
	}
	if err := h.NodeDelete(other); err != nil {
		t.Fatal(err)
	}
	want("nodes gone", map[string]string{})
}
