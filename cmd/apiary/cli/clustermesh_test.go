package cli_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
)

// meshedAgent is a whole agent of cluster name whose etcd is srv, meshed
// through dir.
type meshedAgent struct {
	socket string
	ipc    ipcache.IPCache
	alloc  identity.Allocator
}

func startMeshedAgent(t *testing.T, srv *kvstoretest.Server, name string, id int, dir string, flags ...string) meshedAgent {
	t.Helper()
	state := t.TempDir()
	a := meshedAgent{socket: filepath.Join(state, "apiary.sock")}
	celltest.StartWithFlags(t, append([]string{
		"socket-path=" + a.socket, "state-dir=" + filepath.Join(state, "state"), "bpf-root=" + bpfmaptest.Root(t),
		"kvstore=etcd", "kvstore-opt=etcd.config=" + srv.WriteConfigFile(),
		"cluster-name=" + name, fmt.Sprintf("cluster-id=%d", id), "clustermesh-config=" + dir,
	}, flags...), agent.Agent, celltest.Capture(&a.ipc), celltest.Capture(&a.alloc))
	return a
}

func (a meshedAgent) pod(t *testing.T, ns, name, app, ip string) {
	t.Helper()
	ls, _ := labels.ParseList(labels.SourceK8s, "app="+app, labels.KeyPodNamespace+"="+ns)
	id, _, err := a.alloc.AllocateIdentity(context.Background(), ls)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.ipc.UpsertLocalEndpoint(ipcache.LocalEndpoint{IP: netip.MustParseAddr(ip), Identity: id.ID,
		EndpointID: 1, K8sNamespace: ns, K8sPodName: name}); err != nil {
		t.Fatal(err)
	}
}

// TestClusterMeshCLI: two whole agents of two clusters, each on its own
// TLS etcd, meshed through config files: `apiary clustermesh status`,
// `apiary node list` and the seed's cross-cluster trace.
func TestClusterMeshCLI(t *testing.T) {
	srv1, srv2 := kvstoretest.StartServer(t, kvstoretest.WithTLS()), kvstoretest.StartServer(t, kvstoretest.WithTLS())
	dir1, dir2 := t.TempDir(), t.TempDir()
	link := func(dir, name string, srv *kvstoretest.Server) {
		data, err := os.ReadFile(srv.WriteConfigFile())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link(dir1, "cluster2", srv2)
	link(dir2, "cluster1", srv1)
	a := startMeshedAgent(t, srv1, "cluster1", 1, dir1, "node-name=node-a", "node-ip=192.0.2.10")
	b := startMeshedAgent(t, srv2, "cluster2", 2, dir2, "node-name=node-b", "node-ip=198.51.100.20")
	a.pod(t, "default", "protected-db-0", "protected-db", "10.3.3.3")
	b.pod(t, "istio-space", "employee-0", "employee", "10.4.4.10")

	waitOutputContains(t, a.socket, "cluster2: ready, connected=true: ready", "clustermesh", "status")
	waitOutputContains(t, a.socket, "cluster2/node-b", "node", "list")
	waitOutputContains(t, a.socket, "1/1 clusters ready, 0 global-services", "status")
	waitOutputContains(t, a.socket, "remote-etcd-cluster2", "status", "--all-controllers")
	// A global service of cluster2, as Cilium's writers store it.
	if _, err := srv2.Client().Put(context.Background(), "cilium/state/services/v1/cluster2/default/web",
		`{"cluster":"cluster2","namespace":"default","name":"web","frontends":{"10.96.0.10":{"http":{"Protocol":"TCP","Port":80}}},`+
			`"backends":{"10.4.4.11":{"http":{"Protocol":"TCP","Port":8080}}},"labels":{},"selector":{"app":"web"},`+
			`"includeExternal":true,"shared":true,"clusterID":2}`); err != nil {
		t.Fatal(err)
	}
	waitOutputContains(t, a.socket, "default/web   cluster2   10.96.0.10:80/TCP (http)   10.4.4.11:8080/TCP (http)", "service", "list", "--clusters")
	waitOutputContains(t, a.socket, "1/1 clusters ready, 1 global-services", "status")
	policy := "../../../policy/testdata/clustermesh-l4-policy.yaml"
	if _, err := os.Stat(policy); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, a.socket, "policy", "import", policy); code != 0 {
		t.Fatalf("policy import = %d %s %s", code, out, errOut)
	}
	waitOutputContains(t, a.socket, "ALLOWED", "policy", "trace", "-s", "cluster2/istio-space/employee-0",
		"-d", "cluster1/default/protected-db-0", "--dport", "6379/TCP")
	_, out, _ := run(t, a.socket, "clustermesh", "status")
	t.Logf("apiary clustermesh status:\n%s", out)
	_, out, _ = run(t, a.socket, "status", "--verbose")
	t.Logf("apiary status --verbose:\n%s", out)
	_, out, _ = run(t, a.socket, "policy", "trace", "-s", "cluster2/istio-space/employee-0",
		"-d", "cluster1/default/protected-db-0", "--dport", "6379/TCP")
	t.Logf("apiary policy trace:\n%s", out)
	code, out, _ := run(t, a.socket, "clustermesh", "status", "-o", "json")
	if code != 0 || !strings.Contains(out, `"name": "cluster2"`) || !strings.Contains(out, `"ready": true`) {
		t.Errorf("clustermesh status -o json = %d\n%s", code, out)
	}
}

// waitOutputContains runs the CLI until its output contains want.
func waitOutputContains(t *testing.T, socket, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, out, errOut := run(t, socket, args...)
		if code == 0 && strings.Contains(out, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiary %s = %d (stderr %q):\n%s\nwant it to contain %q", strings.Join(args, " "), code, errOut, out, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
