package endpointcell_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// startStoppable starts an agent like startAgent that the test stops.
// on the etcd srv (identities survive the restart there); flags are
// added (a pod-cidr flag replaces the default one).
func startStoppable(t *testing.T, srv *kvstoretest.Server, stateDir string, dp []cell.Cell, flags ...string) (*client.Client, func()) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	base := []string{
		"socket-path=" + socket, "state-dir=" + stateDir, "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10",
		"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
	}
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "pod-cidr=") }) {
		base = append(base, "pod-cidr=10.0.1.0/24,fd00:1::/120")
	}
	h := celltest.New(t, append(base, flags...), append(agentCells(), dp...)...)
	if err := h.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := client.New(socket)
	return c, func() {
		c.Close()
		if err := h.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	}
}

func TestRestoreFromStateDir(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	stateDir := t.TempDir()
	srv := kvstoretest.StartServer(t)
	c, stop := startStoppable(t, srv, stateDir, []cell.Cell{datapathtest.CellOf(f)})
	before := map[uint16]*models.Endpoint{}
	for id, app := range map[uint16]string{1: "web", 2: "db", 3: "client"} {
		ep, err := c.EndpointPut(ctx, id, models.EndpointRequest{NetNSPath: fakeNetNS(t, app),
			Labels:     []string{"app=" + app, "io.kubernetes.pod.namespace=default"},
			NamedPorts: []models.NamedPort{{Name: "http", Port: 8000 + id, Protocol: "tcp"}}})
		if err != nil {
			t.Fatal(err)
		}
		before[id] = ep
	}
	stop()
	// The agent's stop leaves the datapath alone: links and programs stay.
	if len(f.Links()) != 3 || len(f.Attached()) != 3 {
		t.Fatalf("stop changed the datapath: links %v attached %v", f.Links(), f.Attached())
	}
	// Endpoint 2's namespace went away while the agent was down.
	f.RemoveLink(2)
	// Files that are not endpoint states are skipped and left alone.
	for name, content := range map[string]string{"9.json": "{not json", "x.json": `{"id": 5}`, "notes.txt": "hello"} {
		if err := os.WriteFile(filepath.Join(stateDir, "endpoints", name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	c, stop = startStoppable(t, srv, stateDir, []cell.Cell{datapathtest.CellOf(f)})
	defer stop()
	// A new endpoint never gets a restored endpoint's address.
	fresh, err := c.EndpointPut(ctx, 4, models.EndpointRequest{NetNSPath: fakeNetNS(t, "new"), Labels: podLabels})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint16{1, 3} {
		if fresh.IPv4 == before[id].IPv4 || fresh.IPv6 == before[id].IPv6 {
			t.Fatalf("new endpoint got %s/%s, restored endpoint %d has %s/%s", fresh.IPv4, fresh.IPv6, id, before[id].IPv4, before[id].IPv6)
		}
	}
	celltest.Eventually(t, "endpoints 1 and 3 restored and ready", func() bool {
		for _, id := range []uint16{1, 3} {
			ep, err := c.Endpoint(ctx, id)
			if err != nil || ep.State != "ready" {
				return false
			}
		}
		return true
	})
	for _, id := range []uint16{1, 3} {
		ep, _ := c.Endpoint(ctx, id)
		b := before[id]
		if ep.IPv4 != b.IPv4 || ep.IPv6 != b.IPv6 || ep.Identity != b.Identity || ep.HostIfIndex != b.HostIfIndex ||
			len(ep.NamedPorts) != 1 || ep.NamedPorts[0] != b.NamedPorts[0] {
			t.Errorf("endpoint %d restored as %+v, was %+v", id, ep, b)
		}
	}
	if _, err := c.Endpoint(ctx, 2); err == nil {
		t.Fatal("endpoint 2, whose veth vanished, was restored")
	}
	if _, err := os.Stat(filepath.Join(stateDir, "endpoints", "2.json")); !os.IsNotExist(err) {
		t.Fatalf("state file of endpoint 2: %v, want deleted", err)
	}
	for _, name := range []string{"9.json", "x.json", "notes.txt", "1.json", "3.json", "4.json"} {
		if _, err := os.Stat(filepath.Join(stateDir, "endpoints", name)); err != nil {
			t.Errorf("%s: %v, want kept", name, err)
		}
	}
	if eps, err := c.Endpoints(ctx); err != nil || len(eps) != 3 {
		t.Fatalf("endpoints after the restore: %d %v, want 1, 3 and 4", len(eps), err)
	}
	// The restored endpoints' links were not recreated.
	var creates int
	for _, call := range f.Calls() {
		if len(call) > 18 && call[:18] == "CreateEndpointLink" {
			creates++
		}
	}
	if creates != 4 {
		t.Fatalf("%d links created, want 4 (3 before the restart, 1 after)", creates)
	}
}

// TestRestoreAfterPodCIDRChange: an endpoint whose address is no longer
// in the node's pod CIDR is not restored, and nothing of it stays in the
// datapath.
func TestRestoreAfterPodCIDRChange(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	stateDir := t.TempDir()
	srv := kvstoretest.StartServer(t)
	c, stop := startStoppable(t, srv, stateDir, []cell.Cell{datapathtest.CellOf(f)})
	if _, err := c.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels}); err != nil {
		t.Fatal(err)
	}
	stop()
	c, stop = startStoppable(t, srv, stateDir, []cell.Cell{datapathtest.CellOf(f)}, "pod-cidr=10.9.0.0/24")
	defer stop()
	if eps, err := c.Endpoints(ctx); err != nil || len(eps) != 0 {
		t.Fatalf("endpoints %+v %v, want none", eps, err)
	}
	if len(f.Links()) != 0 || len(f.Attached()) != 0 {
		t.Fatalf("left in the datapath: links %v, attached %v", f.Links(), f.Attached())
	}
	if _, ok := f.PolicyMap(1); ok {
		t.Fatal("policy map left")
	}
	if _, err := os.Stat(filepath.Join(stateDir, "endpoints", "1.json")); !os.IsNotExist(err) {
		t.Fatalf("state file: %v, want deleted", err)
	}
}
