package svcmanagercell_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// remotes is a RemoteSync that syncs when released.
type remotes chan struct{}

func (r remotes) WaitForRemotesSynced(ctx context.Context) error {
	select {
	case <-r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

const echo = `services:
- metadata: {name: echo, namespace: test}
  spec:
    type: NodePort
    clusterIP: 10.96.0.20
    ports: [{name: http, port: 80, nodePort: 30080}]
endpoints:
- metadata:
    name: echo-1
    namespace: test
    labels: {kubernetes.io/service-name: echo}
  addressType: IPv4
  ports: [{name: http, port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
`

// metric returns the value of name with label ("k=v", "" for none), -1
// when absent.
func metric(t *testing.T, reg metrics.Registry, name, label string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := ""
			for _, l := range m.GetLabel() {
				got = l.GetName() + "=" + l.GetValue()
			}
			if got != label {
				continue
			}
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

func line(c status.Collector) models.StatusEntry {
	for _, e := range c.Status().Entries {
		if e.Name == "Services" {
			return e
		}
	}
	return models.StatusEntry{}
}

// TestStateFile: the services of --lb-state-file reach the writer in
// one ReconcileServices once the remote clusters synced, not before, so
// the maps a previous run left keep serving until then and only the
// stale frontend goes; a
// refused file changes nothing and says why on the Services line; a
// changed file rewrites only the frontends it changed; an empty one
// deletes them.
func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "state.yaml")
	celltest.ReplaceFile(t, file, echo)
	w := svcmanagertest.New()
	// The maps of a previous run: the same service, and one since gone.
	svcs, err := svcmanager.ParseStateFile(file, []byte(echo))
	if err != nil {
		t.Fatal(err)
	}
	old := svcmanager.Desired(svcs[0], nil, svcmanager.Node{Name: "node1", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10")}})
	stale := datapath.LBService{Frontend: datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.99"), Port: 80, Proto: datapath.ProtoTCP},
		Type: datapath.SVCTypeClusterIP, Name: "test/gone"}
	if _, _, err := w.ReconcileServices(slices.Values(append(old, stale))); err != nil {
		t.Fatal(err)
	}
	w.Take()
	r := make(remotes)
	var m *svcmanager.Manager
	var col status.Collector
	var reg metrics.Registry
	celltest.StartWithFlags(t, []string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file},
		localnode.Cell, status.Cell, metrics.Cell, svcmanagercell.Cell,
		cell.Provide(func() datapath.LBMapWriter { return w }, func() datapath.RemoteSync { return r }),
		celltest.Capture(&m), celltest.Capture(&col), celltest.Capture(&reg))

	celltest.Eventually(t, "the file's service in the manager", func() bool { return m.Stats().Frontends == 3 })
	celltest.Eventually(t, "the Services line says what it waits for", func() bool {
		e := line(col)
		return strings.Contains(e.Message, "waiting for the initial sync") &&
			slices.Contains(e.Details, "waiting for the remote clusters' sync (apiary clustermesh status)")
	})
	if calls := w.Calls(); len(calls) != 0 {
		t.Fatalf("writes before the remote clusters synced: %v", calls)
	}
	close(r)
	celltest.Eventually(t, "the initial reconcile", func() bool { return slices.Equal(w.Calls(), []string{"reconcile 3"}) })
	want := []string{
		"0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
		"10.96.0.20:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active)",
		"192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active)",
	}
	if got := w.Dump(); !slices.Equal(got, want) {
		t.Errorf("maps = %v, want %v", got, want)
	}
	celltest.Eventually(t, "the Services line says reconciled", func() bool {
		e := line(col)
		return e.State == models.StateOk && strings.Contains(e.Message, "1 services (0 global), 3 frontends, 3 backends (0 remote), reconciled (0 added, 1 removed)")
	})
	w.Take()

	celltest.ReplaceFile(t, file, strings.Replace(echo, "[10.0.1.1]", "[10.0.1.1, 10.0.1.999]", 1))
	celltest.Eventually(t, "the refused file on the Services line", func() bool {
		e := line(col)
		return e.State == models.StateWarning && strings.Contains(strings.Join(e.Details, "\n"),
			`endpoints[0].endpoints[0].addresses[1]: "10.0.1.999" is not an IP address`)
	})
	if calls := w.Take(); len(calls) != 0 {
		t.Errorf("a refused file wrote %v", calls)
	}

	celltest.ReplaceFile(t, file, echo+"  - addresses: [10.0.1.2]\n    conditions: {ready: false, serving: true, terminating: true}\n")
	celltest.Eventually(t, "the changed frontends written", func() bool { return len(w.Calls()) == 3 })
	got := w.Take()
	slices.Sort(got)
	want = []string{
		"upsert 0.0.0.0:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
		"upsert 10.96.0.20:80/TCP ClusterIP -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
		"upsert 192.0.2.10:30080/TCP NodePort -> 10.0.1.1:8080/TCP(active) 10.0.1.2:8080/TCP(terminating)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("calls = %v, want %v", got, want)
	}
	celltest.Eventually(t, "the Services line Ok again", func() bool { return line(col).State == models.StateOk })
	for _, tt := range []struct {
		name, label string
		want        float64
	}{
		{"apiary_services", "", 1},
		{"apiary_services_frontends", "type=NodePort", 2},
		{"apiary_services_backends", "remote=false", 6},
		{"apiary_services_writes_total", "op=upsert", 3},
		{"apiary_services_write_failures_total", "", 0},
	} {
		if got := metric(t, reg, tt.name, tt.label); got != tt.want {
			t.Errorf("%s{%s} = %v, want %v", tt.name, tt.label, got, tt.want)
		}
	}

	celltest.ReplaceFile(t, file, "")
	celltest.Eventually(t, "the frontends deleted", func() bool { return len(w.Dump()) == 0 && m.Stats().Services == 0 })
}

// TestWithoutWriter: without a datapath the frontends are computed and
// the line says they are not written.
func TestWithoutWriter(t *testing.T) {
	file := filepath.Join(t.TempDir(), "state.json")
	celltest.ReplaceFile(t, file, `{"services":[{"metadata":{"name":"dns","namespace":"kube-system"},"spec":{"clusterIP":"10.96.0.10","ports":[{"port":53,"protocol":"UDP"}]}}]}`)
	var m *svcmanager.Manager
	var col status.Collector
	celltest.StartWithFlags(t, []string{"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file},
		localnode.Cell, status.Cell, svcmanagercell.Cell, celltest.Capture(&m), celltest.Capture(&col))
	celltest.Eventually(t, "the line says nothing is written", func() bool {
		e := line(col)
		return e.State == models.StateOk && strings.HasPrefix(e.Message, "1 services (0 global), 1 frontends, 0 backends (0 remote), not written")
	})
	if fes := m.Frontends(); len(fes) != 1 || fes[0].Frontend.String() != "10.96.0.10:53/UDP" {
		t.Errorf("Frontends = %+v", fes)
	}
}

func TestConfig(t *testing.T) {
	_, err := celltest.Populate(t, []string{"lb-state-file=/etc/state.txt"}, localnode.Cell, svcmanagercell.Cell)
	if err == nil || !strings.Contains(err.Error(), `--lb-state-file "/etc/state.txt": the name must end in .yaml, .yml or .json`) {
		t.Errorf("New = %v, want the flag's error", err)
	}
}
