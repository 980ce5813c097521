package svcmanager_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/svcmanager"
)

const stateYAML = `services:
- metadata: {name: echo, namespace: test}
  spec:
    type: LoadBalancer
    clusterIP: 10.96.0.20
    ports: [{name: http, port: 80, nodePort: 30080}]
  status:
    loadBalancer: {ingress: [{ip: 172.16.1.1}]}
endpoints:
- metadata:
    name: echo-1
    namespace: test
    labels: {kubernetes.io/service-name: echo}
  addressType: IPv4
  ports: [{name: http, port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
    nodeName: node1
  - addresses: [10.0.1.2]
    conditions: {ready: false, serving: true, terminating: true}
`

func TestParseStateFile(t *testing.T) {
	svcs, err := svcmanager.ParseStateFile("state.yaml", []byte(stateYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs) != 1 {
		t.Fatalf("services = %d, want 1", len(svcs))
	}
	got := renderAll(svcmanager.Desired(svcs[0], nil, node))
	want := []string{
		"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
		"10.96.0.20:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
		"172.16.1.1:80/TCP LoadBalancer -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
		"192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Desired =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	ranged := strings.Replace(stateYAML, "type: LoadBalancer", "type: LoadBalancer\n    loadBalancerSourceRanges: [192.168.0.0/16, 10.0.0.1/8]", 1)
	if svcs, err := svcmanager.ParseStateFile("state.yaml", []byte(ranged)); err != nil || len(svcs) != 1 ||
		fmt.Sprint(svcs[0].SourceRanges) != "[10.0.0.0/8 192.168.0.0/16]" {
		t.Errorf("state file with loadBalancerSourceRanges = %+v, %v, want ranges [10.0.0.0/8 192.168.0.0/16]", svcs, err)
	}

	json := `{"services":[{"metadata":{"name":"dns","namespace":"kube-system"},"spec":{"clusterIPs":["10.96.0.10","fd00::a"],` +
		`"ports":[{"name":"dns","port":53,"protocol":"UDP"}]}}]}`
	if svcs, err := svcmanager.ParseStateFile("state.json", []byte(json)); err != nil || len(svcs) != 1 || len(svcs[0].Frontends) != 2 {
		t.Errorf("JSON state file = %+v, %v", svcs, err)
	}
	for _, empty := range []string{"state.yaml", "state.json"} {
		if svcs, err := svcmanager.ParseStateFile(empty, []byte("\n")); err != nil || len(svcs) != 0 {
			t.Errorf("empty %s = %+v, %v, want no service", empty, svcs, err)
		}
	}

	tests := []struct {
		name, file, give, want string
	}{
		{name: "unknown field", file: "s.yaml", give: strings.Replace(stateYAML, "clusterIP:", "clusterIPP:", 1), want: `s.yaml: services[0]: json: unknown field "clusterIPP"`},
		{name: "duplicate field", file: "s.yaml", give: strings.Replace(stateYAML, "type: LoadBalancer", "type: LoadBalancer\n    type: NodePort", 1), want: `key "type" already set`},
		{name: "bad format", file: "s.txt", give: stateYAML, want: "s.txt: unknown format"},
		{name: "no name", file: "s.yaml", give: strings.Replace(stateYAML, "name: echo,", "", 1), want: "services[0].metadata.name: empty"},
		{name: "bad cluster IP", file: "s.yaml", give: strings.Replace(stateYAML, "10.96.0.20", "10.96.0.300", 1), want: `services[0]: spec.clusterIPs[0]: "10.96.0.300" is not an IP address`},
		{name: "unspecified cluster IP", file: "s.yaml", give: strings.Replace(stateYAML, "10.96.0.20", "0.0.0.0", 1), want: `services[0]: spec.clusterIPs[0]: "0.0.0.0" is the unspecified address`},
		{name: "unspecified endpoint", file: "s.yaml", give: strings.Replace(stateYAML, "[10.0.1.2]", "[0.0.0.0]", 1), want: `"0.0.0.0" is the unspecified address`},
		{name: "bad protocol", file: "s.yaml", give: strings.Replace(stateYAML, "port: 80,", "port: 80, protocol: TPC,", 1), want: `services[0].spec.ports[0].protocol: "TPC" is not TCP, UDP or SCTP`},
		{name: "slice of no service", file: "s.yaml", give: strings.Replace(stateYAML, "service-name: echo", "service-name: ekko", 1), want: "endpoints[0].metadata.labels[kubernetes.io/service-name]: no service test/ekko in the file"},
		{name: "bad endpoint address", file: "s.yaml", give: strings.Replace(stateYAML, "[10.0.1.2]", "[fd00::2]", 1), want: "endpoints[0].endpoints[1].addresses[0]: fd00::2 is not of addressType IPv4"},
		{name: "bad affinity", file: "s.yaml", give: strings.Replace(stateYAML, "name: echo,", "name: echo, annotations: {service.cilium.io/global: 'true', service.cilium.io/affinity: near},", 1), want: `services[0]: annotation service.cilium.io/affinity: "near"`},
		{name: "bad source range", file: "s.yaml", give: strings.Replace(stateYAML, "type: LoadBalancer", "type: LoadBalancer\n    loadBalancerSourceRanges: [10.0.0.0/8, 10.0.0/8]", 1),
			want: `s.yaml: services[0]: spec.loadBalancerSourceRanges[1]: "10.0.0/8" is not a CIDR`},
		{name: "bad source range annotation", file: "s.yaml", give: strings.Replace(stateYAML, "name: echo,", "name: echo, annotations: {service.beta.kubernetes.io/load-balancer-source-ranges: '10.0.0.0/8,10.300.0.0/16'},", 1),
			want: `s.yaml: services[0]: annotation service.beta.kubernetes.io/load-balancer-source-ranges[1]: "10.300.0.0/16" is not a CIDR`},
		{name: "trailing JSON", file: "s.json", give: `{"services":[]} {}`, want: "s.json: data after the document"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svcs, err := svcmanager.ParseStateFile(tt.file, []byte(tt.give))
			if err == nil || !strings.Contains(err.Error(), tt.want) || svcs != nil {
				t.Errorf("ParseStateFile = %v, %v, want an error with %q", svcs, err, tt.want)
			}
		})
	}
}
