package k8scep_test

import (
	"net/netip"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/policy/ipcache/k8scep"
)

func cep(status map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "web-1", "namespace": "shop"}, "status": status}}
}

func TestDecode(t *testing.T) {
	ep, err := k8scep.Decode(cep(map[string]any{
		"identity":    map[string]any{"id": int64(65800)},
		"networking":  map[string]any{"node": "192.0.2.11", "addressing": []any{map[string]any{"ipv4": "10.0.1.5", "ipv6": "fd00::5"}}},
		"named-ports": []any{map[string]any{"name": "http", "port": int64(8080), "protocol": "tcp"}},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if ep.Identity != 65800 || ep.Node != netip.MustParseAddr("192.0.2.11") || len(ep.Prefixes) != 2 ||
		ep.Metadata.TunnelPeer != ep.Node || ep.Metadata.K8sPodName != "web-1" || ep.Metadata.NamedPorts[0].Protocol != "TCP" {
		t.Fatalf("decoded %+v", ep)
	}
	// Not published with an identity yet: nothing to add.
	ep, err = k8scep.Decode(cep(map[string]any{"state": "waiting-for-identity"}))
	if err != nil || len(ep.Prefixes) != 0 {
		t.Fatalf("no identity: %+v, %v", ep, err)
	}
}

// TestDecodeRefuses: a bad field fails the whole object, naming it.
func TestDecodeRefuses(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"identity":   map[string]any{"id": int64(65800)},
			"networking": map[string]any{"node": "192.0.2.11", "addressing": []any{map[string]any{"ipv4": "10.0.1.5"}}},
		}
	}
	for _, tc := range []struct {
		name   string
		modify func(map[string]any)
		want   string
	}{
		{"negative identity", func(s map[string]any) { s["identity"] = map[string]any{"id": int64(-1)} }, "status.identity.id"},
		{"identity id a string", func(s map[string]any) { s["identity"] = map[string]any{"id": "65800"} }, "status.identity.id"},
		{"identity not an object", func(s map[string]any) { s["identity"] = "65800" }, "status.identity"},
		{"addressing not a list", func(s map[string]any) { s["networking"].(map[string]any)["addressing"] = "10.0.1.5" }, "status.networking.addressing"},
		{"node not an IP", func(s map[string]any) { s["networking"].(map[string]any)["node"] = "node-a" }, "status.networking.node"},
		{"IPv6 as ipv4", func(s map[string]any) {
			s["networking"].(map[string]any)["addressing"] = []any{map[string]any{"ipv4": "fd00::1"}}
		}, "status.networking.addressing[0].ipv4"},
		{"port out of range", func(s map[string]any) {
			s["named-ports"] = []any{map[string]any{"name": "http", "port": int64(70000)}}
		}, "status.named-ports[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := good()
			tc.modify(s)
			_, err := k8scep.Decode(cep(s))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "CiliumEndpoint shop/web-1") {
				t.Fatalf("error %v, want one naming shop/web-1 and %s", err, tc.want)
			}
		})
	}
}
