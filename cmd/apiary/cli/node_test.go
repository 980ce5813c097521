package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
)

// clusterAgent is a whole agent of a cluster whose kvstore is srv.
type clusterAgent struct {
	socket string
	ipc    ipcache.IPCache
	alloc  identity.Allocator
}

func startClusterAgent(t *testing.T, srv *kvstoretest.Server, flags ...string) clusterAgent {
	t.Helper()
	dir := t.TempDir()
	a := clusterAgent{socket: filepath.Join(dir, "apiary.sock")}
	celltest.StartWithFlags(t, append([]string{
		"socket-path=" + a.socket, "state-dir=" + filepath.Join(dir, "state"), "bpf-root=" + bpfmaptest.Root(t),
		"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
	}, flags...), agent.Agent, celltest.Capture(&a.ipc), celltest.Capture(&a.alloc))
	return a
}

// waitOutput runs the CLI until its output is want.
func waitOutput(t *testing.T, socket, want string, args ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, out, errOut := run(t, socket, args...)
		if code == 0 && out == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("apiary %s = %d (stderr %q):\n%s\nwant:\n%s", strings.Join(args, " "), code, errOut, out, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTwoAgentsSeeEachOther runs two whole agents on one etcd: each lists
// the other's node and has the other's endpoint in its ipcache.
func TestTwoAgentsSeeEachOther(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startClusterAgent(t, srv, "node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24")
	b := startClusterAgent(t, srv, "node-name=node-b", "node-ip=192.0.2.20", "pod-cidr=10.0.2.0/24,fd00:2::/64")

	nodes := `Name     IPv4 Address   Endpoint CIDR   IPv6 Address   Endpoint CIDR
node-a   192.0.2.10     10.0.1.0/24
node-b   192.0.2.20     10.0.2.0/24                    fd00:2::/64
`
	waitOutput(t, a.socket, nodes, "node", "list")
	waitOutput(t, b.socket, nodes, "node", "list")

	ctx := context.Background()
	web, _, err := b.alloc.AllocateIdentity(ctx, labels.MustParseList("k8s:app=web", "k8s:io.kubernetes.pod.namespace=default"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ipc.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: netip.MustParseAddr("10.0.2.5"), Identity: web.ID, EndpointID: 7, K8sNamespace: "default", K8sPodName: "web-1",
	}); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%-18s", web.ID.String()) // as wide as "6 (remote-node)" and the column gap
	// node-b's pod CIDRs are fallback entries in a's ipcache: CIDR
	// identities (local scope, numbered as allocated) via node-b.
	cidrID := func(ipc ipcache.IPCache, ip string) string {
		var e ipcache.Entry
		celltest.EventuallyWithin(t, "the pod CIDR entry of "+ip, 20*time.Second, func() bool {
			var ok bool
			e, ok = ipc.LookupByIP(netip.MustParseAddr(ip))
			return ok && e.Prefix.Bits() < e.Prefix.Addr().BitLen()
		})
		return fmt.Sprintf("%-18s", e.Identity.String())
	}
	waitOutput(t, a.socket, `IP              IDENTITY          SOURCE    TUNNEL PEER   KEY   POD
10.0.2.0/24     `+cidrID(a.ipc, "10.0.2.99")+`kvstore   192.0.2.20    0
10.0.2.5/32     `+id+`kvstore   192.0.2.20    0     default/web-1
192.0.2.10/32   1 (host)          local                   0
192.0.2.20/32   6 (remote-node)   kvstore   192.0.2.20    0
fd00:2::/64     `+cidrID(a.ipc, "fd00:2::99")+`kvstore   192.0.2.20    0
`, "ipcache", "list")
	waitOutput(t, b.socket, `IP              IDENTITY          SOURCE    TUNNEL PEER   KEY   POD
10.0.1.0/24     `+cidrID(b.ipc, "10.0.1.99")+`kvstore   192.0.2.10    0
10.0.2.5/32     `+id+`local                   0     default/web-1
192.0.2.10/32   6 (remote-node)   kvstore   192.0.2.10    0
192.0.2.20/32   1 (host)          local                   0
`, "ipcache", "list")

	code, out, _ := run(t, a.socket, "ipcache", "get", "10.0.2.5", "-o", "json")
	var e models.IPCacheEntry
	if code != 0 || json.Unmarshal([]byte(out), &e) != nil || e.Prefix != "10.0.2.5/32" || e.TunnelPeer != "192.0.2.20" {
		t.Errorf("ipcache get -o json = %d %q", code, out)
	}
	code, out, _ = run(t, a.socket, "ipcache", "list", "--prefix", "192.0.2.0/24", "-o", "json")
	var list models.IPCache
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Entries) != 2 || list.Revision == 0 {
		t.Errorf("ipcache list --prefix -o json = %d %q", code, out)
	}
	code, out, _ = run(t, b.socket, "node", "list", "-o", "json")
	var ns []models.Node
	if code != 0 || json.Unmarshal([]byte(out), &ns) != nil || len(ns) != 2 || !ns[1].Local || ns[0].Source != "kvstore" {
		t.Errorf("node list -o json = %d %q", code, out)
	}
}
