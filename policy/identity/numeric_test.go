package identity_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/policy/identity"
)

func TestReservedIdentities(t *testing.T) {
	want := map[identity.NumericIdentity]string{1: "host", 2: "world", 3: "unmanaged", 4: "health", 5: "init",
		6: "remote-node", 7: "kube-apiserver", 8: "ingress", 9: "world-ipv4", 10: "world-ipv6"}
	for id, name := range want {
		if id.ReservedName() != name || identity.ReservedLabels(id).String() != "reserved:"+name {
			t.Errorf("%d: name %q labels %s, want %s", id, id.ReservedName(), identity.ReservedLabels(id), name)
		}
		if got, err := identity.ParseNumericIdentity(name); err != nil || got != id {
			t.Errorf("ParseNumericIdentity(%s) = %d, %v", name, got, err)
		}
	}
	if len(identity.ReservedIdentities()) != 10 {
		t.Error("want 10 reserved identities")
	}
}

func TestClusterLayout(t *testing.T) {
	for _, tc := range []struct {
		name        string
		give        cluster.Info
		first, last identity.NumericIdentity
	}{
		{"cluster 0", cluster.Info{ClusterName: "c0", MaxConnectedClusters: 255}, 256, 65535},
		{"cluster 1", cluster.Info{ClusterName: "c1", ClusterID: 1, MaxConnectedClusters: 255}, 65536 + 256, 131071},
		{"cluster 255", cluster.Info{ClusterName: "c255", ClusterID: 255, MaxConnectedClusters: 255}, 255<<16 + 256, 255<<16 + 65535},
		{"511 clusters, id 3", cluster.Info{ClusterName: "c3", ClusterID: 3, MaxConnectedClusters: 511}, 3<<15 + 256, 4<<15 - 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.give.Validate(); err != nil {
				t.Fatal(err)
			}
			first, last := identity.ClusterRange(tc.give)
			if first != tc.first || last != tc.last {
				t.Errorf("range = %d..%d, want %d..%d", first, last, tc.first, tc.last)
			}
			if got := identity.ClusterIDOf(tc.give, first); got != tc.give.ClusterID {
				t.Errorf("ClusterIDOf(%d) = %d", first, got)
			}
		})
	}
	if identity.NumericIdentity(1<<24+5).ScopeName() != "local" || identity.NumericIdentity(300).ScopeName() != "global" {
		t.Error("scope names")
	}
}

func TestCIDRLabels(t *testing.T) {
	got := identity.CIDRLabels(netip.MustParsePrefix("10.1.2.3/30")).SortedList()
	for _, want := range []string{"cidr:10.1.2.0/30=;", "cidr:10.1.2.0/24=;", "cidr:10.0.0.0/8=;", "cidr:0.0.0.0/0=;", "reserved:world=;"} {
		if !strings.Contains(got, want) {
			t.Errorf("labels %s lack %s", got, want)
		}
	}
	if n := len(identity.CIDRLabels(netip.MustParsePrefix("10.1.2.0/24"))); n != 26 {
		t.Errorf("%d labels for a /24, want 25 prefixes + world", n)
	}
	if !identity.IsCIDRLabels(identity.CIDRLabels(netip.MustParsePrefix("2001:db8::/32"))) {
		t.Error("CIDR labels not recognised")
	}
}
