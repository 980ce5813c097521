package nodecell_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/source"
)

func TestLocalNodeFromFlags(t *testing.T) {
	m, ipc, rec := startManager(t, "pod-cidr=10.0.1.0/24,fd00:1::/64")
	local := m.LocalNode()
	if local.GetKeyName() != "default/node-a" || local.TunnelIP() != netip.MustParseAddr("192.0.2.10") ||
		local.IPv4AllocCIDR.String() != "10.0.1.0/24" || local.IPv6AllocCIDR.String() != "fd00:1::/64" || local.Source != source.Local {
		t.Errorf("local node = %+v", local)
	}
	ipcachetest.Settle(t, ipc)
	if got := entry(ipc, "192.0.2.10"); got != "1/local" {
		t.Errorf("own node IP in the ipcache = %s, want the host identity", got)
	}
	if got := strings.Join(rec.take(), "|"); got != "add default/node-a 192.0.2.10" {
		t.Errorf("handler calls = %s", got)
	}
	if nodes := m.Nodes(); len(nodes) != 1 || nodes[0].Name != "node-a" {
		t.Errorf("nodes = %+v", nodes)
	}
}

func TestRemoteNodesDriveHandlersAndIPCache(t *testing.T) {
	m, ipc, rec := startManager(t)
	rec.take()

	b := remote("node-b", "192.0.2.20")
	b.Source, b.EncryptionKey = source.KVStore, 2
	b.IPv4HealthIP = netip.MustParseAddr("10.0.2.9")
	m.NodeUpdated(b)
	ipcachetest.Settle(t, ipc)
	if got := entry(ipc, "192.0.2.20"); got != "6/kvstore via 192.0.2.20" {
		t.Errorf("node-b = %s, want remote-node via itself", got)
	}
	if got := entry(ipc, "10.0.2.9"); got != "4/kvstore via 192.0.2.20" {
		t.Errorf("node-b health = %s, want health via node-b", got)
	}
	if e, _ := ipc.LookupByIP(netip.MustParseAddr("192.0.2.20")); e.EncryptKey != 2 {
		t.Errorf("encrypt key = %d, want the node's 2", e.EncryptKey)
	}

	moved := b.Clone()
	moved.IPAddresses[0].IP = netip.MustParseAddr("192.0.2.21")
	m.NodeUpdated(moved)
	ipcachetest.Settle(t, ipc)
	if got := entry(ipc, "192.0.2.20") + " " + entry(ipc, "192.0.2.21"); got != "none 6/kvstore via 192.0.2.21" {
		t.Errorf("after the move: old, new = %s; want the old address removed", got)
	}
	if got := entry(ipc, "10.0.2.9"); got != "4/kvstore via 192.0.2.21" {
		t.Errorf("health after the move = %s, want the new tunnel peer", got)
	}

	m.NodeDeleted(moved)
	ipcachetest.Settle(t, ipc)
	if got := entry(ipc, "192.0.2.21") + " " + entry(ipc, "10.0.2.9"); got != "none none" {
		t.Errorf("after delete: %s, want every address removed", got)
	}
	want := "add default/node-b 192.0.2.20|update default/node-b 192.0.2.20 -> 192.0.2.21|delete default/node-b"
	if got := strings.Join(rec.take(), "|"); got != want {
		t.Errorf("handler calls:\n got %s\nwant %s", got, want)
	}
}

func TestNodeSourceOwnership(t *testing.T) {
	type step struct {
		delete bool
		src    source.Source
		ip     string
	}
	tests := []struct {
		name      string
		steps     []step
		wantNode  string // "" when the node must be gone
		wantCalls string
	}{
		{
			name:      "a lower source does not overwrite",
			steps:     []step{{src: source.Local, ip: "192.0.2.30"}, {src: source.KVStore, ip: "192.0.2.31"}},
			wantNode:  "192.0.2.30 local",
			wantCalls: "add default/node-c 192.0.2.30",
		},
		{
			name:      "a higher source overwrites",
			steps:     []step{{src: source.KVStore, ip: "192.0.2.31"}, {src: source.Local, ip: "192.0.2.30"}},
			wantNode:  "192.0.2.30 local",
			wantCalls: "add default/node-c 192.0.2.31|update default/node-c 192.0.2.31 -> 192.0.2.30",
		},
		{
			name:      "only the owner deletes",
			steps:     []step{{src: source.Local, ip: "192.0.2.30"}, {delete: true, src: source.KVStore}},
			wantNode:  "192.0.2.30 local",
			wantCalls: "add default/node-c 192.0.2.30",
		},
		{
			name:      "the owner deletes",
			steps:     []step{{src: source.ClusterMesh, ip: "192.0.2.30"}, {delete: true, src: source.ClusterMesh}},
			wantCalls: "add default/node-c 192.0.2.30|delete default/node-c",
		},
		{
			name:      "deleting an unknown node does nothing",
			steps:     []step{{delete: true, src: source.KVStore}},
			wantCalls: "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, ipc, rec := startManager(t)
			rec.take()
			for _, s := range tc.steps {
				n := remote("node-c", "192.0.2.99")
				n.Source = s.src
				if s.delete {
					m.NodeDeleted(n)
					continue
				}
				n.IPAddresses[0].IP = netip.MustParseAddr(s.ip)
				m.NodeUpdated(n)
			}
			got, ok := m.GetNode(node.Identity{Cluster: "default", Name: "node-c"})
			gotNode := ""
			if ok {
				gotNode = ips(got) + " " + string(got.Source)
			}
			if gotNode != tc.wantNode {
				t.Errorf("node = %q, want %q", gotNode, tc.wantNode)
			}
			if calls := strings.Join(rec.take(), "|"); calls != tc.wantCalls {
				t.Errorf("handler calls = %q, want %q", calls, tc.wantCalls)
			}
			ipcachetest.Settle(t, ipc)
			for _, s := range tc.steps {
				if s.delete {
					continue
				}
				want := "none"
				if ok && ips(got) == s.ip {
					want = "6/" + string(got.Source) + " via " + s.ip
				}
				if e := entry(ipc, s.ip); e != want {
					t.Errorf("ipcache entry of %s = %s, want %s", s.ip, e, want)
				}
			}
		})
	}
}

func TestFailingHandlerIsReported(t *testing.T) {
	rec := &recorder{fail: errors.New("route table full")}
	var m node.Manager
	var health cell.HealthReporter
	celltest.StartWithFlags(t, localFlags, testCells(noAllocator{}), nodecell.Cell,
		cell.Provide(func() node.NodeHandlerOut { return node.NodeHandlerOut{Handler: rec} }),
		celltest.Capture(&m), celltest.Capture(&health))
	m.NodeUpdated(remote("node-b", "192.0.2.20"))
	var got cell.HealthStatus
	for _, st := range health.All() {
		if st.ID == "node-manager.handler-recorder" {
			got = st
		}
	}
	// The validation timer's first run races with NodeUpdated: when it
	// runs after it, the same failing handler is reported by the
	// validation of node-b instead of its add.
	if got.Level != cell.LevelDegraded || got.Error != "route table full" ||
		(got.Message != "NodeAdd of default/node-b failed" && got.Message != "NodeValidateImplementation of default/node-b failed") {
		t.Errorf("handler health = %+v", got)
	}
	if n, ok := m.GetNode(node.Identity{Cluster: "default", Name: "node-b"}); !ok || n.Source != source.Unspec {
		t.Errorf("node-b = %+v, %v; a failing handler must not lose the node", n, ok)
	}
}
