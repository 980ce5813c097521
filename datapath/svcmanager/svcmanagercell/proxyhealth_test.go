package svcmanagercell_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// TestKubeProxyHealthz: --kube-proxy-replacement-healthz-bind-address
// answers kube-proxy's health check: 503 until the initial reconcile,
// 200 after, /healthz 503 (/livez 200) while the node is being
// deleted; the Services line says what it answers. An address another
// process holds turns the line Warning until it is free.
func TestKubeProxyHealthz(t *testing.T) {
	blocker, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := blocker.Addr().String()
	file := filepath.Join(t.TempDir(), "state.yaml")
	celltest.ReplaceFile(t, file, echo)
	w, r := svcmanagertest.New(), make(remotes)
	var col status.Collector
	var node localnode.Store
	celltest.StartWithFlags(t, []string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file,
		"kube-proxy-replacement-healthz-bind-address=" + addr},
		localnode.Cell, status.Cell, svcmanagercell.Cell,
		cell.Provide(func() datapath.LBMapWriter { return w }, func() datapath.RemoteSync { return r }),
		celltest.Capture(&col), celltest.Capture(&node))
	celltest.Eventually(t, "the address in use on the Services line", func() bool {
		e := line(col)
		return e.State == models.StateWarning && strings.Contains(e.Message, "kube-proxy health check not served") &&
			strings.Contains(strings.Join(e.Details, "\n"), "kube-proxy health check "+addr+": listen tcp "+addr+": bind: address already in use")
	})
	blocker.Close()
	probe := func(path string) int {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://%s%s", addr, path))
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	celltest.EventuallyWithin(t, "503 before the initial reconcile, once the address is free", 30*time.Second, func() bool {
		return probe("/healthz") == http.StatusServiceUnavailable
	})
	celltest.Eventually(t, "the Services line says why", func() bool {
		return strings.Contains(line(col).Message, "kube-proxy health check on "+addr+": 503 (waiting for the initial sync)")
	})
	close(r)
	celltest.Eventually(t, "200 once reconciled", func() bool { return probe("/healthz") == http.StatusOK })
	celltest.Eventually(t, "the Services line says 200", func() bool {
		e := line(col)
		return e.State == models.StateOk && strings.HasSuffix(e.Message, "kube-proxy health check on "+addr+": 200")
	})
	node.Update(func(n *localnode.LocalNode) { n.BeingDeleted = true })
	if got := probe("/healthz"); got != http.StatusServiceUnavailable {
		t.Errorf("/healthz while the node is being deleted: %d", got)
	}
	if got := probe("/livez"); got != http.StatusOK {
		t.Errorf("/livez while the node is being deleted: %d", got)
	}
	celltest.Eventually(t, "the Services line says the node goes", func() bool {
		return strings.Contains(line(col).Message, ": 503 (node being deleted)")
	})
	node.Update(func(n *localnode.LocalNode) { n.BeingDeleted = false })
	if got := probe("/healthz"); got != http.StatusOK {
		t.Errorf("/healthz once the node stays: %d", got)
	}
}

// TestKubeProxyHealthzAddress: a bind address that is not IP:port stops
// the agent at start, naming the flag.
func TestKubeProxyHealthzAddress(t *testing.T) {
	for _, bad := range []string{"10256", "0.0.0.0:0", "node1:10256", ":99999", "0.0.0.0:http"} {
		c := svcmanagercell.Config{KubeProxyReplacementHealthzBindAddress: bad}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "--kube-proxy-replacement-healthz-bind-address") {
			t.Errorf("%q: %v, want an error naming the flag", bad, err)
		}
	}
	for _, good := range []string{"", "0.0.0.0:10256", "[::]:10256", ":10256", "192.0.2.10:10256"} {
		c := svcmanagercell.Config{KubeProxyReplacementHealthzBindAddress: good}
		if err := c.Validate(); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
}

// TestHealthCheckNodePortProxyHealth: with a datapath, a health-check
// NodePort answers 503 (serviceProxyHealthy false) until the initial
// reconcile, even with a local endpoint, as kube-proxy answers while it
// is unhealthy; 200 after.
func TestHealthCheckNodePortProxyHealth(t *testing.T) {
	port := freePort(t)
	file := filepath.Join(t.TempDir(), "state.yaml")
	celltest.ReplaceFile(t, file, fmt.Sprintf(lbLocal, port, "node1"))
	w, r := svcmanagertest.New(), make(remotes)
	celltest.StartWithFlags(t, []string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file},
		localnode.Cell, status.Cell, svcmanagercell.Cell,
		cell.Provide(func() datapath.LBMapWriter { return w }, func() datapath.RemoteSync { return r }))
	probe := func() (int, string) {
		c := http.Client{Timeout: 2 * time.Second}
		resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/", port))
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	celltest.Eventually(t, "503 before the initial reconcile", func() bool {
		code, body := probe()
		return code == http.StatusServiceUnavailable && strings.Contains(body, `"localEndpoints":1,"serviceProxyHealthy":false`)
	})
	close(r)
	celltest.Eventually(t, "200 once reconciled", func() bool {
		code, body := probe()
		return code == http.StatusOK && strings.Contains(body, `"serviceProxyHealthy":true`)
	})
}
