package node_test

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/policy/source"
)

func mustAddr(s string) netip.Addr     { return netip.MustParseAddr(s) }
func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// TestNodeJSONGolden checks that nodes are written byte for byte as
// Cilium writes them (the golden files are written by hand in Cilium's
// shape: CIDRs as net.IPNet objects with base64 masks, "" for absent IPs,
// null for absent CIDRs and maps) and read back unchanged.
func TestNodeJSONGolden(t *testing.T) {
	tests := []struct {
		name string
		give node.Node
	}{
		{name: "local", give: node.Node{
			Name: "node-a", Cluster: "default",
			IPAddresses:   []node.Address{{Type: node.NodeInternalIP, IP: mustAddr("192.0.2.10")}},
			IPv4AllocCIDR: mustPrefix("10.0.1.0/24"), IPv6AllocCIDR: mustPrefix("fd00:1::/64"),
			Source: source.Local,
		}},
		{name: "full", give: node.Node{
			Name: "worker-2", Cluster: "prod",
			IPAddresses: []node.Address{
				{Type: node.NodeInternalIP, IP: mustAddr("10.0.2.15")},
				{Type: node.NodeExternalIP, IP: mustAddr("203.0.113.7")},
				{Type: node.NodeCiliumInternalIP, IP: mustAddr("10.11.0.1")},
				{Type: node.NodeInternalIP, IP: mustAddr("fd00::a")},
			},
			IPv4AllocCIDR:           mustPrefix("10.11.0.0/16"),
			IPv4SecondaryAllocCIDRs: []netip.Prefix{mustPrefix("10.12.0.0/24")},
			IPv6AllocCIDR:           mustPrefix("f00d::a0f:0:0:0/112"),
			IPv6SecondaryAllocCIDRs: []netip.Prefix{mustPrefix("f00e::/96")},
			IPv4HealthIP:            mustAddr("10.11.0.9"), IPv6HealthIP: mustAddr("f00d::a0f:0:0:9"),
			IPv4IngressIP: mustAddr("10.11.0.10"), IPv6IngressIP: mustAddr("f00d::a0f:0:0:a"),
			ClusterID: 7, Source: source.CustomResource, EncryptionKey: 3,
			Labels:          map[string]string{"kubernetes.io/hostname": "worker-2", "topology.kubernetes.io/zone": "eu-west-1a"},
			Annotations:     map[string]string{"network.cilium.io/wg-pub-key": "4kUmfGy5yXLGlv8LEFcLSG9PHTYJwhpu5XF5WrLTQ2k="},
			NodeIdentity:    6,
			WireguardPubKey: "4kUmfGy5yXLGlv8LEFcLSG9PHTYJwhpu5XF5WrLTQ2k=",
			BootID:          "9d2c7d4b-8f3e-4d9a-9b7e-2b6f0d8c1a5e",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "node-"+tc.name+".json"))
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
			var back node.Node
			if err := json.Unmarshal(want, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, tc.give) {
				t.Errorf("decoded:\n got %+v\nwant %+v", back, tc.give)
			}
		})
	}
}

// TestDecodeCiliumNodes reads values as Cilium agents write them: a dump
// of an older agent (no secondary CIDRs, no labels) and a dual-stack kind
// node of a current one.
func TestDecodeCiliumNodes(t *testing.T) {
	tests := []struct {
		file                     string
		wantKey, wantV4, wantV6  string
		wantCIDR4, wantCIDR6     string
		wantHealth4, wantHealth6 string
	}{
		{"cilium-node-etcd-dump.json", "default/k8s-node1", "10.5.1.132", "invalid IP", "10.6.6.0/24", "invalid Prefix", "10.6.6.79", "invalid IP"},
		{"cilium-node-kind.json", "default/kind-worker", "172.18.0.3", "fc00:f853:ccd:e793::3", "10.244.1.0/24", "fd00:10:244:1::/112", "10.244.1.45", "fd00:10:244:1::a4f2"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			var n node.Node
			if err := json.Unmarshal(data, &n); err != nil {
				t.Fatal(err)
			}
			got := []string{n.GetKeyName(), n.PrimaryIP(false).String(), n.PrimaryIP(true).String(),
				n.IPv4AllocCIDR.String(), n.IPv6AllocCIDR.String(), n.IPv4HealthIP.String(), n.IPv6HealthIP.String()}
			want := []string{tc.wantKey, tc.wantV4, tc.wantV6, tc.wantCIDR4, tc.wantCIDR6, tc.wantHealth4, tc.wantHealth6}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded %v, want %v", got, want)
			}
			if n.Source != source.Local {
				t.Errorf("source = %q", n.Source)
			}
		})
	}
}

func TestDecodeBadNodes(t *testing.T) {
	tests := []struct{ name, give, want string }{
		{"not JSON", `{"Name":`, "unexpected end of JSON input"},
		{"bad address", `{"Name":"n","IPAddresses":[{"Type":"InternalIP","IP":"10.0.0.300"}]}`, "decode node"},
		{"empty address", `{"Name":"n","IPAddresses":[{"Type":"InternalIP","IP":""}]}`, "field IPAddresses[0].IP: missing"},
		{"bad mask", `{"Name":"n","IPv4AllocCIDR":{"IP":"10.0.0.0","Mask":"/wD/AA=="}}`, "field IPv4AllocCIDR: mask"},
		{"wrong family", `{"Name":"n","IPv6AllocCIDR":{"IP":"10.0.0.0","Mask":"////AA=="}}`, "field IPv6AllocCIDR: 10.0.0.0/24 is not an IPv6 CIDR"},
		{"health IP of the wrong family", `{"Name":"n","IPv4HealthIP":"fd00::1"}`, "field IPv4HealthIP: fd00::1 is not an IPv4 address"},
		{"bad secondary", `{"Name":"n","IPv4SecondaryAllocCIDRs":[{"IP":"10.0.0.0","Mask":null}]}`, "field IPv4SecondaryAllocCIDRs[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var n node.Node
			err := json.Unmarshal([]byte(tc.give), &n)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
	var n node.Node
	if err := json.Unmarshal([]byte(`{"Name":"n","IPv4AllocCIDR":"10.0.7.0/24"}`), &n); err != nil || n.IPv4AllocCIDR.String() != "10.0.7.0/24" {
		t.Errorf("a CIDR given as a string: %v, %s; want it read", err, n.IPv4AllocCIDR)
	}
}
