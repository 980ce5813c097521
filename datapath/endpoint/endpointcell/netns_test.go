package endpointcell_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestEndpointsInNetNS creates three endpoints in three namespaces
// through the API of an agent whose datapath works in a "node"
// namespace of the test, checks TCP between them, restarts the agent on
// the same state dir (same addresses and identities, veths untouched, a
// connection open across the restart keeps working), and deletes them
// (nothing left in the node namespace).
func TestEndpointsInNetNS(t *testing.T) {
	ctx := context.Background()
	nodeNS := netnstest.New(t, "apiary-node")
	pods := []string{netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod"), netnstest.New(t, "apiary-pod")}
	srv := kvstoretest.StartServer(t)
	stateDir := t.TempDir()
	dp := []cell.Cell{linux.Cell, overrideNetNS(nodeNS)}

	c, stop := startStoppable(t, srv, stateDir, dp)
	eps := make([]*models.Endpoint, len(pods))
	for i, ns := range pods {
		ep, err := c.EndpointPut(ctx, uint16(i+1), models.EndpointRequest{NetNSPath: ns,
			Labels: []string{fmt.Sprintf("app=pod%d", i), "io.kubernetes.pod.namespace=default"}})
		if err != nil {
			stop()
			t.Fatal(err)
		}
		eps[i] = ep
	}
	// Paths that are no endpoint namespace are refused, naming the field.
	for _, bad := range []string{nodeNS, stateDir + "/endpoints/1.json"} {
		_, err := c.EndpointPut(ctx, 9, models.EndpointRequest{NetNSPath: bad, Labels: []string{"app=bad"}})
		wantStatus(t, err, 400)
		if !strings.Contains(err.Error(), "field netns-path") {
			t.Errorf("PUT with netns-path %s: %v, want an error naming netns-path", bad, err)
		}
	}
	for i := range pods {
		j := (i + 1) % len(pods)
		for _, ip := range []string{eps[j].IPv4, eps[j].IPv6} {
			checkTCP(t, pods[i], pods[j], netip.MustParseAddr(ip))
		}
	}
	// A connection from pod 0 to pod 1 stays open across the restart.
	stopEcho, err := netnstest.Echo(pods[1], netip.MustParseAddr(eps[1].IPv4), 7000)
	if err != nil {
		t.Fatal(err)
	}
	defer stopEcho()
	conn := netnstest.Connect(t, pods[0], netip.MustParseAddr(eps[1].IPv4), 7000)
	defer conn.Close()
	netnstest.RoundTrip(t, conn, "before the restart")
	stop()

	netnstest.RoundTrip(t, conn, "while the agent is down")
	c, stop = startStoppable(t, srv, stateDir, dp)
	defer stop()
	for i := range eps {
		got, err := c.Endpoint(ctx, eps[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.IPv4 != eps[i].IPv4 || got.IPv6 != eps[i].IPv6 || got.HostIfIndex != eps[i].HostIfIndex {
			t.Errorf("endpoint %d after the restart: %+v, was %+v", eps[i].ID, got, eps[i])
		}
	}
	waitReady(t, c, eps)
	for i := range eps {
		got, _ := c.Endpoint(ctx, eps[i].ID)
		if got.Identity != eps[i].Identity {
			t.Errorf("endpoint %d identity %d after the restart, was %d", eps[i].ID, got.Identity, eps[i].Identity)
		}
	}
	netnstest.RoundTrip(t, conn, "after the restart")
	checkTCP(t, pods[2], pods[0], netip.MustParseAddr(eps[0].IPv6))

	for _, ep := range eps {
		if err := c.EndpointDelete(ctx, ep.ID); err != nil {
			t.Fatal(err)
		}
	}
	netnstest.Must(t, nodeNS, func() error {
		links, err := netlink.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if l.Attrs().Name != "lo" {
				t.Errorf("node namespace keeps %s after the deletes", l.Attrs().Name)
			}
		}
		return nil
	})
}

// overrideNetNS points the Linux datapath at the node namespace.
func overrideNetNS(path string) cell.Cell {
	return celltest.Override(func(c *linux.Config) { c.DatapathNetNS = path })
}

func waitReady(t *testing.T, c interface {
	Endpoint(context.Context, uint16) (*models.Endpoint, error)
}, eps []*models.Endpoint) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, ep := range eps {
		for {
			got, err := c.Endpoint(context.Background(), ep.ID)
			if err == nil && got.State == "ready" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("endpoint %d not ready: %+v %v", ep.ID, got, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// checkTCP dials ip (an address of the pod in to) from the pod in from.
func checkTCP(t *testing.T, from, to string, ip netip.Addr) {
	t.Helper()
	stop, err := netnstest.Echo(to, ip, 8080)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := netnstest.Dial(from, ip, 8080, 5*time.Second); err != nil {
		t.Errorf("TCP from %s to %s: %v", from, ip, err)
	}
}
