package ipcache_test

import (
	"bytes"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestIPIdentityPairGolden checks that the pairs apiary writes are
// byte for byte what Cilium writes (the golden files are written by hand
// in Cilium's shape, not generated), and read back the same.
func TestIPIdentityPairGolden(t *testing.T) {
	endpoint := ipcache.NewIPIdentityPair(pfx("10.0.1.5/32"), 65836, netip.MustParseAddr("192.0.2.10"))
	endpoint.Key, endpoint.Metadata = 3, "cilium-global:default:node-a:1234"
	endpoint.K8sNamespace, endpoint.K8sPodName, endpoint.K8sServiceAccount = "default", "web-7c9f8d6b5-x2x9q", "web"
	endpoint.NamedPorts = []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}, {Name: "dns", Port: 53, Protocol: "UDP"}}
	tests := []struct {
		name string
		give *ipcache.IPIdentityPair
		key  string
	}{
		{name: "endpoint", give: endpoint, key: "10.0.1.5"},
		{name: "cidr", give: ipcache.NewIPIdentityPair(pfx("10.0.0.0/24"), identity.ScopeLocal+1, netip.Addr{}), key: "10.0.0.0/24"},
		{name: "ipv6-cidr", give: ipcache.NewIPIdentityPair(pfx("fd00::/64"), 6, netip.MustParseAddr("fd00:1::10")), key: "fd00::/64"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "ipidentitypair-"+tc.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := tc.give.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Marshal:\n got %s\nwant %s", got, want)
			}
			if tc.give.GetKeyName() != tc.key {
				t.Errorf("key = %q, want %q", tc.give.GetKeyName(), tc.key)
			}
			back, err := ipcache.DecodeIPIdentityPair(tc.key, want)
			if err != nil {
				t.Fatal(err)
			}
			again, _ := back.Marshal()
			if !bytes.Equal(again, want) {
				t.Errorf("decode and encode again:\n got %s\nwant %s", again, want)
			}
		})
	}
}

// TestDecodeCiliumIPIdentityPair reads values exactly as Cilium agents
// write them (a dump of cilium-etcd, and an IPv6 pod with named ports and
// a service account).
func TestDecodeCiliumIPIdentityPair(t *testing.T) {
	tests := []struct {
		file, key  string
		wantPrefix string
		wantHost   string
		wantID     identity.NumericIdentity
		wantPod    string
		wantPorts  int
		wantSA     string
	}{
		{"cilium-ipidentitypair.json", "10.6.6.43", "10.6.6.43/32", "10.5.1.132", 12928, "istio-system/ai-ingressgateway-6bdbdbf7dc-jz85c", 0, ""},
		{"cilium-ipidentitypair-ipv6.json", "f00d::a0f:0:0:8b2d", "f00d::a0f:0:0:8b2d/128", "10.0.2.15", 48312, "kube-system/coredns-5d78c9869d-6fz7g", 3, "coredns"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := ipcache.DecodeIPIdentityPair(tc.key, data)
			if err != nil {
				t.Fatal(err)
			}
			prefix, _ := p.Prefix()
			host, _ := p.HostAddr()
			if prefix.String() != tc.wantPrefix || host.String() != tc.wantHost || p.ID != tc.wantID ||
				p.K8sNamespace+"/"+p.K8sPodName != tc.wantPod || len(p.NamedPorts) != tc.wantPorts || p.K8sServiceAccount != tc.wantSA {
				t.Errorf("decoded %s %s %d %s/%s sa %q %v", prefix, host, p.ID, p.K8sNamespace, p.K8sPodName, p.K8sServiceAccount, p.NamedPorts)
			}
		})
	}
}

func TestDecodeBadIPIdentityPair(t *testing.T) {
	tests := []struct {
		name, key, give, want string
	}{
		{"not JSON", "10.0.0.1", `{"IP":`, "decode IPIdentityPair"},
		{"bad IP", "10.0.0.1", `{"IP":"10.0.0.300","ID":300}`, "decode IPIdentityPair"},
		{"no IP", "10.0.0.1", `{"ID":300}`, "field IP: missing"},
		{"mask of the wrong family", "10.0.0.0/24", `{"IP":"10.0.0.0","Mask":"//////////8AAAAAAAAAAA==","ID":300}`, "field Mask"},
		{"non-canonical mask", "10.0.0.0/24", `{"IP":"10.0.0.0","Mask":"/wD/AA==","ID":300}`, "field Mask"},
		{"host bits", "10.0.0.1/24", `{"IP":"10.0.0.1","Mask":"////AA==","ID":300}`, "outside its mask"},
		{"key mismatch", "10.0.0.2", `{"IP":"10.0.0.1","ID":300}`, `the key says "10.0.0.2", the value "10.0.0.1"`},
		{"no identity", "10.0.0.1", `{"IP":"10.0.0.1","ID":0}`, "field ID: 0 is not an identity"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ipcache.DecodeIPIdentityPair(tc.key, []byte(tc.give))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestNewIPIdentityPairShapes(t *testing.T) {
	p := ipcache.NewIPIdentityPair(pfx("10.0.0.0/8"), 300, netip.Addr{})
	if !bytes.Equal(p.Mask, net.CIDRMask(8, 32)) || len(p.IP) != 4 || p.HostIP != nil {
		t.Errorf("pair = %+v, want a 4-byte IP, a /8 mask and no host IP", p)
	}
	if p := ipcache.NewIPIdentityPair(pfx("10.0.0.1/32"), 300, netip.Addr{}); !p.IsHost() {
		t.Error("a /32 is a host entry without a mask")
	}
}

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
