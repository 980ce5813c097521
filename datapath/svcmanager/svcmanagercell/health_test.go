package svcmanagercell_test

import (
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
)

const lbLocal = `services:
- metadata: {name: web, namespace: shop}
  spec:
    type: LoadBalancer
    externalTrafficPolicy: Local
    healthCheckNodePort: %d
    clusterIP: 10.96.0.30
    ports: [{port: 80, nodePort: 30090}]
endpoints:
- metadata:
    name: web-1
    namespace: shop
    labels: {kubernetes.io/service-name: web}
  addressType: IPv4
  ports: [{port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
    nodeName: %s
`

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startWithLBLocal starts the cell on node1 with a state file holding
// lbLocal on health-check port port (its endpoint on node1), and more
// flags; it returns the file and the status collector.
func startWithLBLocal(t *testing.T, port int, flags ...string) (string, status.Collector) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "state.yaml")
	celltest.ReplaceFile(t, file, fmt.Sprintf(lbLocal, port, "node1"))
	var col status.Collector
	celltest.StartWithFlags(t, append([]string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file}, flags...),
		localnode.Cell, status.Cell, svcmanagercell.Cell, celltest.Capture(&col))
	return file, col
}

// TestHealthCheckNodePort: a LoadBalancer Service with
// externalTrafficPolicy Local in --lb-state-file gets its
// healthCheckNodePort answered on the node: 200 while it has a ready
// endpoint on this node, 503 when its endpoint moves to another, and
// the Services line counts the port; with
// --enable-health-check-nodeport=false nothing listens.
func TestHealthCheckNodePort(t *testing.T) {
	port := freePort(t)
	file, col := startWithLBLocal(t, port)
	probe := func() int {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	celltest.Eventually(t, "200 with a local endpoint", func() bool { return probe() == http.StatusOK })
	celltest.Eventually(t, "the port on the Services line", func() bool {
		return strings.Contains(line(col).Message, ", 1 health-check NodePorts")
	})
	celltest.ReplaceFile(t, file, fmt.Sprintf(lbLocal, port, "node2"))
	celltest.Eventually(t, "503 once the endpoint is on another node", func() bool { return probe() == http.StatusServiceUnavailable })
	celltest.ReplaceFile(t, file, "")
	celltest.Eventually(t, "the port closed with the service gone", func() bool { return probe() == 0 })
}

// TestHealthCheckNodePortDisabled: --enable-health-check-nodeport=false
// opens no port.
func TestHealthCheckNodePortDisabled(t *testing.T) {
	port := freePort(t)
	_, col := startWithLBLocal(t, port, "enable-health-check-nodeport=false")
	celltest.Eventually(t, "the service read", func() bool { return strings.Contains(line(col).Message, "1 services") })
	if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		c.Close()
		t.Fatal("a health-check NodePort is open with --enable-health-check-nodeport=false")
	}
}

// TestHealthCheckNodePortInUse: a port another process holds turns the
// Services line Warning naming it, and is opened once it is free,
// without any change of the service (the retry).
func TestHealthCheckNodePortInUse(t *testing.T) {
	blocker, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	port := blocker.Addr().(*net.TCPAddr).Port
	_, col := startWithLBLocal(t, port)
	celltest.Eventually(t, "the port in use on the Services line", func() bool {
		e := line(col)
		return strings.Contains(e.Message, "a health-check NodePort failed") &&
			strings.Contains(strings.Join(e.Details, "\n"), fmt.Sprintf("health-check NodePort %d: listen", port))
	})
	blocker.Close()
	celltest.EventuallyWithin(t, "the port answered once free", 30*time.Second, func() bool {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}
