package k8scluster

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"
	"k8s.io/client-go/kubernetes"

	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// Underlay addresses: the lab bridge (where the API server proxy
// listens) and the nodes, one /24.
var (
	underlay = netip.MustParsePrefix("10.99.0.0/24")
	labIP    = netip.MustParseAddr("10.99.0.1")
	// podCIDR is the cluster's pod CIDR, a /24 of it per node.
	podCIDR = netip.MustParsePrefix("10.200.0.0/16")
)

// apiPort is the port the API server is reached on from the nodes.
const apiPort = 6443

// Options shape a cluster.
type Options struct {
	// Nodes is the number of nodes (default 2).
	Nodes int
	// AgentArgs are flags every agent gets after the ConfigMap's (flags
	// win over --config-dir).
	AgentArgs []string
	// NodeArgs, when set, gives node i's agent more flags after those.
	NodeArgs func(i int) []string
}

// Cluster is a running cluster.
type Cluster struct {
	t     testing.TB
	API   *k8stest.Server
	Nodes []*Node
	// Lab is the namespace of the underlay bridge.
	Lab  string
	dir  string
	bins binaries
	opts Options
	// kubeconfig is the agents' (their ServiceAccount's token, the API
	// server through the lab proxy).
	kubeconfig string
	configDir  string
}

// Start builds the binaries, starts the API server and the controller
// manager, the underlay, the nodes and their agents, and waits until
// every agent is healthy. Everything stops with the test.
func Start(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 2
	}
	c := &Cluster{t: t, dir: t.TempDir(), opts: opts}
	c.bins = buildBinaries(t)
	c.API = k8stest.Start(t)
	c.API.InstallCRDs()
	c.applyInstall()
	// The node IPAM controller gives each Node its pod CIDRs
	// (--allocate-node-cidrs), which the agents' --ipam=kubernetes reads.
	// The EndpointSlice controller makes the Services' slices from the
	// pods' addresses and readiness (the service manager reads them).
	c.API.StartControllerManager(t, k8stest.NodeIPAM{ClusterCIDRs: []string{podCIDR.String()}, Controllers: []string{"endpointslice"}})
	c.Lab = netnstest.New(t, "k8sc-lab")
	c.underlay()
	c.proxyAPI()
	c.kubeconfig = c.agentKubeconfig()
	c.configDir = c.writeConfigDir()
	for i := range opts.Nodes {
		c.Nodes = append(c.Nodes, c.addNode(i))
	}
	for _, n := range c.Nodes {
		n.StartAgent()
	}
	for _, n := range c.Nodes {
		n.WaitHealthy()
	}
	return c
}

// Clientset is an admin client of the API server.
func (c *Cluster) Clientset() kubernetes.Interface { return c.API.Clientset() }

// underlay creates the lab bridge with its address.
func (c *Cluster) underlay() {
	netnstest.Must(c.t, c.Lab, func() error {
		br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0"}}
		if err := netlink.LinkAdd(br); err != nil {
			return fmt.Errorf("add the lab bridge: %w", err)
		}
		if err := netlink.AddrAdd(br, nlAddr(netip.PrefixFrom(labIP, underlay.Bits()))); err != nil {
			return err
		}
		return netlink.LinkSetUp(br)
	})
}

// proxyAPI makes the API server, which listens on the host's loopback,
// reachable from the nodes at labIP:apiPort: a TCP relay whose listener
// lives in the lab namespace and whose connections to the server are
// made from the host's.
func (c *Cluster) proxyAPI() {
	u, err := url.Parse(c.API.URL)
	if err != nil {
		c.t.Fatal(err)
	}
	var ln net.Listener
	netnstest.Must(c.t, c.Lab, func() error {
		var err error
		ln, err = net.Listen("tcp", netip.AddrPortFrom(labIP, apiPort).String())
		return err
	})
	var wg sync.WaitGroup
	c.t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				relay(in, u.Host)
			}()
		}
	}()
}

// relay copies between in and a new connection to target until either
// side closes.
func relay(in net.Conn, target string) {
	defer in.Close()
	out, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

// agentKubeconfig writes the agents' kubeconfig: the API server through
// the lab proxy (its certificate names localhost), the token of the
// ServiceAccount the install manifests create.
func (c *Cluster) agentKubeconfig() string {
	token := c.API.ServiceAccountToken("kube-system", "apiary-agent")
	name := filepath.Join(c.dir, "kubeconfig")
	content := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: lab
  cluster:
    server: https://%s
    certificate-authority: %s
    tls-server-name: localhost
users:
- name: apiary-agent
  user:
    token: %s
contexts:
- name: lab
  context: {cluster: lab, user: apiary-agent}
current-context: lab
`, netip.AddrPortFrom(labIP, apiPort), c.API.CAFile, token)
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		c.t.Fatal(err)
	}
	return name
}

// inNS runs fn on a thread in the namespace at path.
func inNS(path string, fn func() error) error { return netnsutil.RunPath(path, fn) }

// nlAddr is p as a netlink address.
func nlAddr(p netip.Prefix) *netlink.Addr {
	return &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
}
