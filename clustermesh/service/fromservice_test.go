package service_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// stateFile is a global service of --lb-state-file: a dual-stack
// ClusterIP with a named TCP port and an unnamed-in-the-slice UDP one,
// a ready, a not ready and a terminating endpoint, and a NodePort.
const stateFile = `services:
- metadata:
    name: rebel-base
    namespace: default
    annotations: {service.cilium.io/global: "true", service.cilium.io/affinity: local}
  spec:
    type: NodePort
    clusterIPs: [10.96.100.10, fd00:96::10]
    ports: [{name: http, port: 80, nodePort: 30080}, {name: dns, port: 53, protocol: UDP}]
endpoints:
- metadata: {name: rebel-base-1, namespace: default, labels: {kubernetes.io/service-name: rebel-base}}
  addressType: IPv4
  ports: [{name: http, port: 8080}, {name: dns, port: 5353, protocol: UDP}]
  endpoints:
  - addresses: [10.1.0.1]
  - addresses: [10.1.0.2]
    conditions: {ready: false}
  - addresses: [10.1.0.3]
    conditions: {ready: false, serving: true, terminating: true}
`

// TestFromService: a service of the state file becomes the
// ClusterService Cilium's writers would publish for the same Service,
// and a remote cluster reading it gets its ready backends back.
func TestFromService(t *testing.T) {
	svcs, err := svcmanager.ParseStateFile("state.yaml", []byte(stateFile))
	if err != nil {
		t.Fatal(err)
	}
	c1 := cluster.Info{ClusterName: "cluster1", ClusterID: 1}
	cs := service.FromService(svcs[0], c1)
	data, err := cs.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"cluster":"cluster1","namespace":"default","name":"rebel-base",` +
		`"frontends":{"10.96.100.10":{"dns":{"Protocol":"UDP","Port":53},"http":{"Protocol":"TCP","Port":80}},` +
		`"fd00:96::10":{"dns":{"Protocol":"UDP","Port":53},"http":{"Protocol":"TCP","Port":80}}},` +
		`"backends":{"10.1.0.1":{"dns":{"Protocol":"UDP","Port":5353},"http":{"Protocol":"TCP","Port":8080}}},` +
		`"labels":null,"selector":null,"includeExternal":true,"shared":true,"clusterID":1}`
	if string(data) != want {
		t.Errorf("ClusterService =\n  %s\nwant\n  %s", data, want)
	}
	if _, err := service.Decode("default/rebel-base", data); err != nil {
		t.Errorf("Decode of the published value: %v", err)
	}

	var got []string
	for _, b := range service.RemoteBackends([]*service.ClusterService{cs}, "cluster2") {
		got = append(got, fmt.Sprintf("%s %v %d", b.Addr, b.PortNames, b.ClusterID))
	}
	slices.Sort(got)
	if want := []string{"10.1.0.1:5353/UDP [dns] 1", "10.1.0.1:8080/TCP [http] 1"}; !slices.Equal(got, want) {
		t.Errorf("RemoteBackends in cluster2 = %q, want %q", got, want)
	}

	t.Run("not shared", func(t *testing.T) {
		svcs[0].Shared = false
		if cs := service.FromService(svcs[0], c1); cs.Shared || !cs.IncludeExternal {
			t.Errorf("shared %v, includeExternal %v; want false, true", cs.Shared, cs.IncludeExternal)
		}
	})
}
