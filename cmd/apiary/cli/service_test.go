package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

const lbState = `services:
- metadata: {name: echo, namespace: test}
  spec:
    clusterIPs: [10.96.0.20, fd00::20]
    ports: [{name: http, port: 80, nodePort: 30080}]
    type: NodePort
    ipFamilies: [IPv4]
endpoints:
- metadata: {name: echo-1, namespace: test, labels: {kubernetes.io/service-name: echo}}
  addressType: IPv4
  ports: [{name: http, port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
  - addresses: [10.0.1.2]
    conditions: {ready: false, serving: true, terminating: true}
`

// TestServiceList: `apiary service list` of a whole agent whose services
// come from --lb-state-file, in Cilium's columns.
func TestServiceList(t *testing.T) {
	dir := t.TempDir()
	socket, state := filepath.Join(dir, "apiary.sock"), filepath.Join(dir, "lb.yaml")
	if err := os.WriteFile(state, []byte(lbState), 0o600); err != nil {
		t.Fatal(err)
	}
	celltest.StartWithFlags(t, []string{"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"),
		"bpf-root=" + bpfmaptest.Root(t), "node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + state}, agent.Agent)
	// The NodePort is IPv4 only (ipFamilies); the IPv6 ClusterIP has no
	// IPv6 backend.
	waitOutput(t, socket, `ID   Frontend               Service Type   Backend
1    0.0.0.0:30080/TCP      NodePort       1 => 10.0.1.1:8080/TCP (active)
                                           2 => 10.0.1.2:8080/TCP (terminating)
2    10.96.0.20:80/TCP      ClusterIP      1 => 10.0.1.1:8080/TCP (active)
                                           2 => 10.0.1.2:8080/TCP (terminating)
3    192.0.2.10:30080/TCP   NodePort       1 => 10.0.1.1:8080/TCP (active)
                                           2 => 10.0.1.2:8080/TCP (terminating)
4    [fd00::20]:80/TCP      ClusterIP
`, "service", "list")
}
