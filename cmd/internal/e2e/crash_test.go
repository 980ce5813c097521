package e2e_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// TestKillDuringCreations kills the agent (SIGKILL) while 20 endpoint
// creations run at once, restarts it, and checks that nothing of a
// half-created endpoint is left: every host-side veth, state file and
// pinned policy map belongs to a live endpoint, and every address in a
// pod's namespace is its live endpoint's. Creating the lost endpoints
// again then succeeds, and no two pods hold one address.
func TestKillDuringCreations(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	dir := t.TempDir()
	socket, stateDir, bpfRoot := filepath.Join(dir, "apiary.sock"), filepath.Join(dir, "state"), bpfmaptest.Root(t)
	node := netnstest.New(t, "apiary-node")
	args := []string{"--socket-path=" + socket, "--state-dir=" + stateDir, "--bpf-root=" + bpfRoot,
		"--datapath-netns=" + node, "--pod-cidr=10.0.5.0/24", "--node-name=node-a", "--node-ip=192.0.2.10",
		"--prometheus-serve-addr="}
	const n = 20
	pods := make([]string, n+1)
	for i := 1; i <= n; i++ {
		pods[i] = netnstest.New(t, "apiary-pod")
	}
	put := func(c *client.Client, id int) error {
		_, err := c.EndpointPut(context.Background(), uint16(id), models.EndpointRequest{NetNSPath: pods[id],
			Labels: []string{"app=p" + strconv.Itoa(id), "io.kubernetes.pod.namespace=default"}})
		return err
	}

	first := startAgent(t, agentBin, args...)
	first.waitStarted(t)
	c := client.New(socket)
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = put(c, i) }()
	}
	time.Sleep(300 * time.Millisecond)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	c.Close()
	first.wait(t)

	second := startAgent(t, agentBin, args...)
	second.waitStarted(t)
	c = client.New(socket)
	defer c.Close()
	live := liveEndpoints(t, c)
	t.Logf("%d endpoints survived the kill", len(live))
	checkNoLeftovers(t, node, stateDir, bpfRoot, pods, live)

	for i := 1; i <= n; i++ {
		if _, ok := live[uint16(i)]; ok {
			continue
		}
		if err := put(c, i); err != nil {
			t.Errorf("create endpoint %d again after the restart: %v", i, err)
		}
	}
	live = liveEndpoints(t, c)
	if len(live) != n {
		t.Fatalf("%d endpoints after creating the lost ones, want %d", len(live), n)
	}
	checkNoLeftovers(t, node, stateDir, bpfRoot, pods, live)
}

// liveEndpoints waits until no endpoint is being restored and returns
// them by id.
func liveEndpoints(t *testing.T, c *client.Client) map[uint16]models.Endpoint {
	t.Helper()
	var out map[uint16]models.Endpoint
	celltest.Eventually(t, "the endpoints restored", func() bool {
		eps, err := c.Endpoints(context.Background())
		if err != nil {
			return false
		}
		out = map[uint16]models.Endpoint{}
		for _, e := range eps {
			if e.State != "ready" {
				return false
			}
			out[e.ID] = e
		}
		return true
	})
	return out
}

// checkNoLeftovers: every lxc veth in the node, state file and policy
// map pin is a live endpoint's, and each pod's eth0 address is its live
// endpoint's (none for a pod without one); no address is held twice.
func checkNoLeftovers(t *testing.T, node, stateDir, bpfRoot string, pods []string, live map[uint16]models.Endpoint) {
	t.Helper()
	netnstest.Must(t, node, func() error {
		links, err := netlink.LinkList()
		if err != nil {
			return err
		}
		for _, l := range links {
			if id, ok := strings.CutPrefix(l.Attrs().Name, "lxc"); ok {
				if _, isLive := live[atoiID(id)]; !isLive {
					t.Errorf("veth %s left in the node without a live endpoint", l.Attrs().Name)
				}
			}
		}
		return nil
	})
	files, _ := os.ReadDir(filepath.Join(stateDir, "endpoints"))
	for _, f := range files {
		if id, ok := strings.CutSuffix(f.Name(), ".json"); ok {
			if _, isLive := live[atoiID(id)]; !isLive {
				t.Errorf("state file %s without a live endpoint", f.Name())
			}
		}
	}
	pins, _ := os.ReadDir(bpfRoot)
	for _, p := range pins {
		if id, ok := strings.CutPrefix(p.Name(), "policy_"); ok {
			if _, isLive := live[atoiID(id)]; !isLive {
				t.Errorf("pinned %s without a live endpoint", p.Name())
			}
		}
	}
	seen := map[netip.Addr]int{}
	for i := 1; i < len(pods); i++ {
		var addrs []netip.Addr
		netnstest.Must(t, pods[i], func() error {
			l, err := netlink.LinkByName("eth0")
			if err != nil {
				return nil // no interface: nothing held
			}
			as, err := netlink.AddrList(l, netlink.FAMILY_V4)
			for _, a := range as {
				ip, _ := netip.AddrFromSlice(a.IP)
				addrs = append(addrs, ip.Unmap())
			}
			return err
		})
		ep, isLive := live[uint16(i)]
		for _, a := range addrs {
			if !isLive || ep.IPv4 != a.String() {
				t.Errorf("pod %d holds %s, but its endpoint is %s", i, a, describe(ep, isLive))
			}
			if other, dup := seen[a]; dup {
				t.Errorf("pods %d and %d both hold %s", other, i, a)
			}
			seen[a] = i
		}
	}
}

func describe(ep models.Endpoint, live bool) string {
	if !live {
		return "gone"
	}
	return fmt.Sprintf("endpoint %d with %s", ep.ID, ep.IPv4)
}

func atoiID(s string) uint16 {
	n, _ := strconv.Atoi(s)
	return uint16(n)
}
