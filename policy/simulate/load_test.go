package simulate_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/simulate"
)

// TestLoadErrors checks that every problem of a scenario is reported,
// naming the file and the entry.
func TestLoadErrors(t *testing.T) {
	const eps = "endpoints:\n- {name: a, namespace: x, ips: [192.0.2.1]}\n- {name: b, namespace: x}\n"
	for _, tt := range []struct {
		name string
		give string
		want []string
	}{
		{"unknown field", "cluster: c1\nendpoint: []\n", []string{"scenario.yaml: decode: ", "field endpoint not found"}},
		{"duplicate key", "cluster: c1\ncluster: c2\n", []string{"scenario.yaml: decode: ", `mapping key "cluster" already defined`}},
		{"bad ip", eps + "- {name: c, namespace: x, ips: [192.0.2.300]}\n",
			[]string{`scenario.yaml: endpoints[2] (x/c): ips[0]: "192.0.2.300" is not an IP address`}},
		{"duplicate endpoint", eps + "- {name: a, namespace: x}\n", []string{"scenario.yaml: endpoints[2] (x/a): duplicate endpoint: also endpoints[0]"}},
		{"same name in another cluster", eps + "- {name: a, namespace: x, cluster: c2}\n", nil},
		{"duplicate ip", eps + "- {name: c, namespace: x, ips: [192.0.2.1]}\n",
			[]string{"scenario.yaml: endpoints[2] (x/c): ips[0]: 192.0.2.1 is also an address of x/a"}},
		{"bad port", eps + "- {name: c, namespace: x, ports: [{name: http, port: 0}, {name: dns, port: 53, protocol: ICMP}]}\n",
			[]string{"endpoints[2] (x/c): ports[0]: port 0 is not in 1-65535", `endpoints[2] (x/c): ports[1]: protocol "ICMP" is not TCP, UDP or SCTP`}},
		{"bad port name", eps + "- {name: c, namespace: x, ports: [{name: HTTP, port: 80}]}\n",
			[]string{`endpoints[2] (x/c): ports[0]: name "HTTP" must be lower-case alphanumerics or '-'`}},
		{"bad names", "cluster: -c1\nnamespaces: [{name: X, labels: {ok: \"-no\"}}]\nendpoints: [{name: a, namespace: x, cluster: c2, labels: {\"a/b/c\": v}}]\n", []string{
			`scenario.yaml: cluster: cluster name "-c1"`,
			`scenario.yaml: namespaces[0] (X): namespace "X"`,
			`scenario.yaml: namespaces[0] (X): labels: value "-no" of ok`,
			`scenario.yaml: endpoints[0] (c2/x/a): labels: key "a/b/c"`}},
		{"duplicate namespace", "namespaces: [{name: x}, {name: x}]\n", []string{"scenario.yaml: namespaces[1] (x): duplicate namespace"}},
		{"unknown endpoint", eps + "queries: [{from: x/a, to: x/z, port: 80}, {from: c2/x/a, to: x/b, port: 80}]\n", []string{
			`scenario.yaml: queries[0] (x/a -> x/z): to: "x/z" is no endpoint of the scenario`,
			`scenario.yaml: queries[1] (c2/x/a -> x/b): from: "c2/x/a" is no endpoint of the scenario`}},
		{"bad query", eps + "queries: [{from: a, to: x/b, port: 70000, protocol: gre}]\n", []string{
			`queries[0] (a -> x/b): from: "a" is not ns/name, cluster/ns/name or an IP address`,
			"queries[0] (a -> x/b): port 70000 is not in 1-65535", `queries[0] (a -> x/b): protocol "gre" is not TCP, UDP, SCTP, ICMP or ICMPv6`}},
		{"ICMP query with a port", eps + "queries: [{from: x/a, to: x/b, port: 8, protocol: ICMP}]\n", []string{
			"queries[0] (x/a -> x/b): port 8: an ICMP query has no port; give the message type in type"}},
		{"ICMP query without a type", eps + "queries: [{from: x/a, to: x/b, protocol: icmpv6}]\n", []string{
			"queries[0] (x/a -> x/b): type is required with protocol ICMPv6"}},
		{"bad ICMP type", eps + "queries: [{from: x/a, to: x/b, protocol: ICMP, type: EchoRequestt}, {from: x/a, to: x/b, protocol: ICMP, type: 256}]\n", []string{
			`queries[0] (x/a -> x/b): type: "EchoRequestt" is neither a number in 0..255 nor an IPv4 ICMP type name`,
			`queries[1] (x/a -> x/b): type: "256" is neither a number`}},
		{"type on TCP", eps + "queries: [{from: x/a, to: x/b, port: 80, type: 8}]\n", []string{
			`queries[0] (x/a -> x/b): type "8": only ICMP and ICMPv6 queries have a type`}},
		{"ICMP to an IPv6 address", eps + "queries: [{from: x/a, to: 'fd00::9', protocol: ICMP, type: 8}]\n", []string{
			"queries[0] (x/a -> fd00::9): to: fd00::9 is not an IPv4 address, and protocol ICMP is IPv4 only"}},
		{"ICMP queries", eps + "queries: [{from: x/a, to: x/b, protocol: ICMP, type: 8}, {from: x/a, to: x/b, protocol: ICMPv6, type: EchoRequest}]\n", nil},
		{"bad policy", eps + "policies:\n- {apiVersion: cilium.io/v2, kind: CiliumNetworkPolicy, metadata: {name: p}, spec: {endpointSelector: {}, ingress: [{fromEndpoint: []}]}}\n",
			[]string{"scenario.yaml: policies[0]: document 1 (CiliumNetworkPolicy default/p)", "fromEndpoint"}},
		{"duplicate policy", eps + "policies:\n" + strings.Repeat("- {apiVersion: cilium.io/v2, kind: CiliumNetworkPolicy, metadata: {name: p}, spec: {endpointSelector: {}}}\n", 2),
			[]string{"scenario.yaml: policies[1]: duplicate policy CiliumNetworkPolicy default/p: also policies[0]"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := simulate.Load("scenario.yaml", []byte(tt.give))
			if tt.want == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.want) && !strings.Contains(tt.want[0], "decode") && tt.name != "bad policy" {
				t.Errorf("%d error lines, want %d:\n%v", n, len(tt.want), err)
			}
			if !strings.Contains(tt.name, "policy") && !errors.Is(err, simulate.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid: %v", err)
			}
		})
	}
}
