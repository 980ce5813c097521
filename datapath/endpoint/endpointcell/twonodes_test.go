package endpointcell_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/datapath/noderoute"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// TestTwoNodesRoutePods runs two agents on one etcd, each with its
// datapath in a node namespace, the two namespaces joined by a veth: the
// node-routes handler routes each node's pod CIDR via its IP on the
// other, so a pod on node A reaches a pod on node B over TCP; when node
// B goes, A's route to its pod CIDR goes too.
func TestTwoNodesRoutePods(t *testing.T) {
	ctx := context.Background()
	srv := kvstoretest.StartServer(t)
	nodeA, nodeB := netnstest.New(t, "apiary-node"), netnstest.New(t, "apiary-node")
	netnstest.Join(t, nodeA, nodeB, netip.MustParseAddr("192.168.60.1"), netip.MustParseAddr("192.168.60.2"))

	start := func(name, ip, cidr, ns string) (*client.Client, func()) {
		socket := filepath.Join(t.TempDir(), "apiary.sock")
		h := celltest.New(t, []string{
			"socket-path=" + socket, "state-dir=" + t.TempDir(), "cluster-name=c1", "cluster-id=1",
			"node-name=" + name, "node-ip=" + ip, "pod-cidr=" + cidr, "auto-direct-node-routes",
			"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
		}, append(agentCells(), nodecell.Cell, noderoute.Cell, linux.Cell, overrideNetNS(ns))...)
		if err := h.Start(ctx); err != nil {
			t.Fatal(err)
		}
		c := client.New(socket)
		return c, func() {
			c.Close()
			if err := h.Stop(ctx); err != nil {
				t.Errorf("stop %s: %v", name, err)
			}
		}
	}
	ca, stopA := start("node-a", "192.168.60.1", "10.0.1.0/24", nodeA)
	defer stopA()
	cb, stopB := start("node-b", "192.168.60.2", "10.0.2.0/24", nodeB)
	stopped := false
	defer func() {
		if !stopped {
			stopB()
		}
	}()

	podA, podB := netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")
	labels := []string{"app=x", "io.kubernetes.pod.namespace=default"}
	if _, err := ca.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: podA, Labels: labels}); err != nil {
		t.Fatal(err)
	}
	epB, err := cb.EndpointPut(ctx, 1, models.EndpointRequest{NetNSPath: podB, Labels: labels})
	if err != nil {
		t.Fatal(err)
	}
	ipB := netip.MustParseAddr(epB.IPv4)
	stop, err := netnstest.Echo(podB, ipB, 8080)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	celltest.Eventually(t, "pod on node A reaches pod on node B", func() bool {
		return netnstest.Dial(podA, ipB, 8080, time.Second) == nil
	})

	// Node B goes: its agent stops and its node key is deleted.
	stopB()
	stopped = true
	if _, err := srv.Client().Delete(ctx, layout.NodeKey("c1", "node-b")); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "node A's route to node B's pod CIDR removed", func() bool {
		return !hasRoute(t, nodeA, "10.0.2.0/24")
	})
}

// hasRoute reports whether the namespace ns has a route to cidr.
func hasRoute(t *testing.T, ns, cidr string) bool {
	found := false
	netnstest.Must(t, ns, func() error {
		routes, err := netlink.RouteList(nil, netlink.FAMILY_V4)
		for _, r := range routes {
			if r.Dst != nil && r.Dst.String() == cidr {
				found = true
			}
		}
		return err
	})
	return found
}
