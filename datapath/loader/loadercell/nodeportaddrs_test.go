package loadercell_test

import (
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader/loadercell"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
)

const nodePortService = `services:
- metadata: {name: web, namespace: test}
  spec:
    type: NodePort
    clusterIP: 10.96.0.20
    ports: [{port: 80, nodePort: 30080}]
endpoints:
- metadata: {name: web-1, namespace: test, labels: {kubernetes.io/service-name: web}}
  addressType: IPv4
  ports: [{port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
`

// addrNS returns a namespace of the test's own (and its path) with the
// devices eth7 (10.2.0.1/24, 10.2.0.99/24: a secondary address,
// fd00:2::1/64 and its link-local address) and eth8 (none yet).
func addrNS(t *testing.T) (netns.NsHandle, string) {
	t.Helper()
	ns, path := vethNS(t, "eth7", "eth8")
	err := netnsutil.Run(ns, func() error {
		lk, err := netlink.LinkByName("eth7")
		if err != nil {
			return err
		}
		for _, a := range []string{"10.2.0.1/24", "10.2.0.99/24", "fd00:2::1/64", "fe80::7/64"} {
			if err := addrAdd(lk, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ns, path
}

func addrAdd(lk netlink.Link, a string) error {
	addr, err := netlink.ParseAddr(a)
	if err != nil {
		return err
	}
	addr.Flags = unix.IFA_F_NODAD
	return netlink.AddrAdd(lk, addr)
}

// inNS changes the addresses of device name in ns: add (true) or
// delete a.
func inNS(t *testing.T, ns netns.NsHandle, name, a string, add bool) {
	t.Helper()
	err := netnsutil.Run(ns, func() error {
		lk, err := netlink.LinkByName(name)
		if err != nil {
			return err
		}
		if add {
			return addrAdd(lk, a)
		}
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return err
		}
		return netlink.AddrDel(lk, addr)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func addrs(s ...string) []netip.Addr {
	out := make([]netip.Addr, len(s))
	for i, a := range s {
		out[i] = netip.MustParseAddr(a)
	}
	return out
}

// nodePorts returns the NodePort frontends' addresses of the manager.
func nodePorts(m *svcmanager.Manager) []netip.Addr {
	var out []netip.Addr
	for _, e := range m.Frontends() {
		if e.Type == datapath.SVCTypeNodePort && !e.Frontend.Addr.IsUnspecified() {
			out = append(out, e.Frontend.Addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// TestCellNodePortAddresses starts the loader and service manager cells
// with --enable-node-port on two devices of a namespace of the test's
// own: NodePorts are served on the node's address and each device's
// primary IPv4 and IPv6 address (not a secondary or link-local one); an
// address added to or deleted from a device adds or deletes its
// NodePort frontends; --nodeport-addresses limits them to its CIDRs, the
// node's own address and secondary ones included; a CIDR that is not one
// stops the agent naming the flag.
func TestCellNodePortAddresses(t *testing.T) {
	ns, nsPath := addrNS(t)
	root := bpfmaptest.Root(t)
	file := filepath.Join(t.TempDir(), "lb.yaml")
	celltest.ReplaceFile(t, file, nodePortService)
	flags := []string{"bpf-root=" + root, "enable-node-port=true", "devices=eth7,eth8", "datapath-netns=" + nsPath,
		"node-name=node1", "node-ip=192.0.2.10", "lb-state-file=" + file}
	var (
		npa datapath.NodePortAddrs
		m   *svcmanager.Manager
	)
	h := celltest.StartWithFlags(t, flags, loadercell.Cell, linux.Cell, localnode.Cell, svcmanagercell.Cell,
		celltest.Capture(&npa), celltest.Capture(&m))
	if got, want := npa.Addrs(addrs("192.0.2.10")), addrs("10.2.0.1", "192.0.2.10", "fd00:2::1"); !slices.Equal(got, want) {
		t.Errorf("NodePort addresses %v, want %v", got, want)
	}
	// The service is IPv4: its NodePorts are on the IPv4 ones.
	celltest.Eventually(t, "NodePorts on the node's and eth7's addresses", func() bool {
		return slices.Equal(nodePorts(m), addrs("10.2.0.1", "192.0.2.10"))
	})
	inNS(t, ns, "eth8", "10.8.0.1/24", true)
	celltest.Eventually(t, "a NodePort on eth8's new address", func() bool {
		return slices.Equal(nodePorts(m), addrs("10.2.0.1", "10.8.0.1", "192.0.2.10"))
	})
	inNS(t, ns, "eth7", "fd00:3::1/64", true)
	inNS(t, ns, "eth7", "fd00:2::1/64", false)
	celltest.Eventually(t, "eth7's other IPv6 address once the first is deleted", func() bool {
		return slices.Equal(npa.Addrs(nil), addrs("10.2.0.1", "10.8.0.1", "fd00:3::1"))
	})
	inNS(t, ns, "eth8", "10.8.0.1/24", false)
	celltest.Eventually(t, "eth8's NodePort gone with its address", func() bool {
		return slices.Equal(nodePorts(m), addrs("10.2.0.1", "192.0.2.10"))
	})
	if err := h.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}

	celltest.StartWithFlags(t, append(flags, "nodeport-addresses=10.2.0.0/24"), loadercell.Cell, linux.Cell, localnode.Cell, svcmanagercell.Cell,
		celltest.Capture(&npa), celltest.Capture(&m))
	celltest.Eventually(t, "NodePorts within --nodeport-addresses only", func() bool {
		return slices.Equal(nodePorts(m), addrs("10.2.0.1", "10.2.0.99"))
	})

	_, err := celltest.Populate(t, append(flags, "nodeport-addresses=10.2.0.0/24,eth7"), loadercell.Cell, linux.Cell, localnode.Cell, svcmanagercell.Cell)
	if want := `--nodeport-addresses[1]: "eth7" is not a CIDR (such as 192.0.2.0/24)`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("start with a bad --nodeport-addresses: %v, want %q", err, want)
	}
}
