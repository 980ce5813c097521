package localnode_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
)

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		give localnode.Config
		want string // "" for valid
	}{
		{name: "defaults", give: localnode.DefaultConfig},
		{name: "everything", give: localnode.Config{NodeName: "worker-1.example", NodeIP: "10.0.0.5", PodCIDR: []string{"10.0.1.0/24", "fd00:1::/64"}}},
		{name: "loopback for a lab", give: localnode.Config{NodeIP: "127.0.0.11"}},
		{name: "IPv6 node", give: localnode.Config{NodeIP: "fd00::5"}},
		{name: "dual-stack node", give: localnode.Config{NodeIP: "10.0.0.5,fd00::5"}},
		{name: "dual-stack node, IPv6 first", give: localnode.Config{NodeIP: "fd00::5, 10.0.0.5"}},
		{name: "two IPv4", give: localnode.Config{NodeIP: "10.0.0.5,10.0.0.6"}, want: `--node-ip: "10.0.0.5,10.0.0.6": two addresses must be an IPv4 and an IPv6 one`},
		{name: "three addresses", give: localnode.Config{NodeIP: "10.0.0.5,fd00::5,fd00::6"}, want: "--node-ip: \"10.0.0.5,fd00::5,fd00::6\": at most two addresses"},
		{name: "bad second address", give: localnode.Config{NodeIP: "10.0.0.5,fe80::1"}, want: "--node-ip: fe80::1 is not a unicast address"},
		{name: "upper-case name", give: localnode.Config{NodeName: "Worker-1"}, want: `--node-name: "Worker-1" must be lower-case`},
		{name: "slash in name", give: localnode.Config{NodeName: "a/b"}, want: `--node-name: "a/b"`},
		{name: "not an IP", give: localnode.Config{NodeIP: "10.0.0.300"}, want: `--node-ip: "10.0.0.300" is not an IP address`},
		{name: "unspecified IP", give: localnode.Config{NodeIP: "0.0.0.0"}, want: "--node-ip: 0.0.0.0 is not a unicast address"},
		{name: "multicast IP", give: localnode.Config{NodeIP: "ff02::1"}, want: "--node-ip: ff02::1 is not a unicast address"},
		{name: "link-local IP", give: localnode.Config{NodeIP: "169.254.1.1"}, want: "--node-ip: 169.254.1.1 is not a unicast address"},
		{name: "not a CIDR", give: localnode.Config{PodCIDR: []string{"10.0.1.0"}}, want: `--pod-cidr: "10.0.1.0" is not a CIDR`},
		{name: "host bits", give: localnode.Config{PodCIDR: []string{"10.0.1.7/24"}}, want: "--pod-cidr: 10.0.1.7/24 has host bits set (did you mean 10.0.1.0/24?)"},
		{name: "two IPv4", give: localnode.Config{PodCIDR: []string{"10.0.1.0/24", "10.0.2.0/24"}}, want: "--pod-cidr: more than one IPv4 CIDR (10.0.2.0/24)"},
		{name: "ipam kubernetes", give: localnode.Config{IPAM: "kubernetes"}},
		{name: "ipam kubernetes with pod-cidr", give: localnode.Config{IPAM: "kubernetes", PodCIDR: []string{"10.0.1.0/24"}}, want: "--pod-cidr: cannot be set with --ipam=kubernetes"},
		{name: "ipam cluster-pool", give: localnode.Config{IPAM: "cluster-pool"}, want: `--ipam: "cluster-pool" is not static or kubernetes`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.give.IPAM == "" {
				tc.give.IPAM = localnode.IPAMStatic
			}
			err := tc.give.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestBadFlagsStopTheAgent checks the error a user sees: one line that
// names the flag, before anything starts.
func TestBadFlagsStopTheAgent(t *testing.T) {
	tests := []struct {
		flag, want string
	}{
		{"node-ip=300.1.1.1", `invalid configuration: --node-ip: "300.1.1.1" is not an IP address`},
		{"pod-cidr=10.0.1.1/24", "invalid configuration: --pod-cidr: 10.0.1.1/24 has host bits set"},
		{"cluster-name=Prod", `invalid configuration: --cluster-name: "Prod" must be`},
		{"cluster-id=256", "invalid configuration: --cluster-id: 256 is out of range 0..255"},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			_, err := celltest.Populate(t, []string{"node-name=node-a", tc.flag}, localnode.Cell, celltest.Capture(new(localnode.Store)))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("populate = %v, want one line starting with %q", err, tc.want)
			}
		})
	}
}

func TestStore(t *testing.T) {
	var st localnode.Store
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=fd00::5,192.0.2.5", "pod-cidr=10.0.1.0/24,fd00:1::/64",
		"cluster-name=cluster1", "cluster-id=7"}, localnode.Cell, celltest.Capture(&st))
	n := st.Get()
	want := localnode.LocalNode{
		Name: "node-a", IP: netip.MustParseAddr("fd00::5"), SecondaryIP: netip.MustParseAddr("192.0.2.5"),
		Cluster:       cluster.Info{ClusterName: "cluster1", ClusterID: 7, MaxConnectedClusters: 255},
		IPv4AllocCIDR: netip.MustParsePrefix("10.0.1.0/24"), IPv6AllocCIDR: netip.MustParsePrefix("fd00:1::/64"),
	}
	if n != want {
		t.Fatalf("Get = %+v, want %+v", n, want)
	}
	var seen []string
	unsubscribe := st.Subscribe(func(n localnode.LocalNode) { seen = append(seen, n.IPv4AllocCIDR.String()) })
	st.Update(func(n *localnode.LocalNode) { n.IPv4AllocCIDR = netip.MustParsePrefix("10.0.2.0/24") })
	unsubscribe()
	st.Update(func(n *localnode.LocalNode) { n.IPv4AllocCIDR = netip.MustParsePrefix("10.0.3.0/24") })
	if got := strings.Join(seen, ","); got != "10.0.2.0/24" {
		t.Errorf("subscriber saw %s, want only the update before it unsubscribed", got)
	}
	if got := st.Get().IPv4AllocCIDR.String(); got != "10.0.3.0/24" {
		t.Errorf("after the updates: %s", got)
	}
}
