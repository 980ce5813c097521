package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// binaries are the programs the lab runs; etcd is a command (the
// program and its first arguments: `demo etcd` or an etcd binary).
type binaries struct {
	agent, cli string
	etcd       []string
}

// lab is a plan being built and run.
type lab struct {
	p      *plan
	bins   binaries
	out    io.Writer
	ca     *labCA
	etcds  map[*cluster]*proc
	agents map[*node]*proc
	client map[*node]*client.Client
	// procs are the servers of the pods and of the outside host.
	procs []*proc
	// routingMode is the agents' --routing-mode (native when empty).
	routingMode string
	// gsvcPods are the pods of the global service walk-through.
	gsvcPods []*gsvcPod
}

func newLab(p *plan, bins binaries, out io.Writer) *lab {
	return &lab{p: p, bins: bins, out: out, etcds: map[*cluster]*proc{}, agents: map[*node]*proc{}, client: map[*node]*client.Client{}}
}

// dir returns a path under the lab directory.
func dir(elem ...string) string { return filepath.Join(append([]string{labDir}, elem...)...) }

// up builds the lab: certificates, underlay, etcds, nodes and agents,
// the mesh, the pods and their servers, the outside host and the
// policies; it returns once every agent enforces them.
func (l *lab) up(ctx context.Context) error {
	steps := []struct {
		what string
		fn   func(context.Context) error
	}{
		{"certificates", l.certificates},
		{"underlay", l.underlay},
		{"etcds", l.startEtcds},
		{"nodes", l.nodes},
		{"agents", l.startAgents},
		{"mesh", l.waitMesh},
		{"pods", l.pods},
		{"outside host", l.outsideHost},
		{"neighbours", l.underlayNeighbours},
		{"policies", l.policies},
		{"ipcache", l.waitIPCache},
	}
	for _, s := range steps {
		start := time.Now()
		if err := s.fn(ctx); err != nil {
			return err
		}
		fmt.Fprintf(l.out, "  %-13s ready in %s\n", s.what, time.Since(start).Round(10*time.Millisecond))
	}
	return nil
}

// certificates makes the lab CA, a server certificate per etcd and the
// agents' client certificate.
func (l *lab) certificates(context.Context) error {
	if err := os.MkdirAll(dir("pki"), 0o700); err != nil {
		return fmt.Errorf("create lab directory: %w", err)
	}
	ca, err := newLabCA(dir("pki"))
	if err != nil {
		return err
	}
	l.ca = ca
	for _, c := range l.p.clusters {
		if err := ca.issue("etcd-"+c.name, int64(10+c.id), c.etcdIP); err != nil {
			return err
		}
	}
	return ca.issue("agent", 2)
}

// bridgeMAC is the lab bridge's address (locally administered).
var bridgeMAC = net.HardwareAddr{0x02, 0x1a, 0xb0, 0x00, 0x00, 0x01}

// underlay creates the lab namespace with the bridge br0 carrying the
// lab's and the etcds' addresses.
func (l *lab) underlay(context.Context) error {
	if err := netnsutil.NewNamed(labPrefix); err != nil {
		return err
	}
	h, err := handleAt(nsPath(labPrefix))
	if err != nil {
		return err
	}
	defer h.Close()
	// A fixed address: a bridge without one takes the lowest address of
	// its ports, so attaching a port (the outside host, after the
	// agents) could change it under the nodes' neighbour entries of the
	// etcds' addresses, black-holing their connections until the
	// entries were probed again; etcd's client (keepalive timeout 5s)
	// then failed with "read: connection timed out".
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "br0", HardwareAddr: bridgeMAC}}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("add the lab bridge: %w", err)
	}
	var addrs []*netlink.Addr
	for _, f := range families {
		addrs = append(addrs, nlAddr(netip.PrefixFrom(l.p.labIP[f], l.p.underlay[f].Bits())))
	}
	for _, c := range l.p.clusters {
		addrs = append(addrs, nlAddr(netip.PrefixFrom(c.etcdIP, l.p.underlay[v4].Bits())))
	}
	for _, a := range addrs {
		if err := h.AddrAdd(br, a); err != nil {
			return fmt.Errorf("add %s to the lab bridge: %w", a.IPNet, err)
		}
	}
	if err := h.LinkSetUp(br); err != nil {
		return fmt.Errorf("set the lab bridge up: %w", err)
	}
	return nil
}

// startEtcds starts one etcd per cluster in the lab namespace, TLS with
// client certificates required, and waits for each to accept
// connections.
func (l *lab) startEtcds(ctx context.Context) error {
	for _, c := range l.p.clusters {
		if err := l.startEtcd(c); err != nil {
			return err
		}
	}
	for _, c := range l.p.clusters {
		if err := l.waitEtcd(ctx, c); err != nil {
			return err
		}
	}
	if err := l.writeConfigs(); err != nil {
		return err
	}
	return l.writePolicies()
}

// startEtcd starts cluster c's etcd (again, on the same data, after a
// stop).
func (l *lab) startEtcd(c *cluster) error {
	d := dir("etcd-" + c.name)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return fmt.Errorf("create %s: %w", d, err)
	}
	client, peer := "https://"+c.etcdIP.String()+":2379", "http://"+c.etcdIP.String()+":2380"
	name := "etcd-" + c.name
	args := append(l.bins.etcd[1:len(l.bins.etcd):len(l.bins.etcd)],
		"--name", name, "--data-dir", filepath.Join(d, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", name+"="+peer,
		"--cert-file", l.ca.path(name+".crt"), "--key-file", l.ca.path(name+".key"),
		"--trusted-ca-file", l.ca.path("ca.crt"), "--client-cert-auth")
	p, err := startIn("etcd of "+c.name, nsPath(labPrefix), filepath.Join(d, "etcd.log"), l.bins.etcd[0], args...)
	if err != nil {
		return err
	}
	l.etcds[c] = p
	return nil
}

// waitEtcd waits until cluster c's etcd accepts TCP connections.
func (l *lab) waitEtcd(ctx context.Context, c *cluster) error {
	p := l.etcds[c]
	addr := net.JoinHostPort(c.etcdIP.String(), "2379")
	return poll(ctx, 30*time.Second, "etcd of "+c.name+" to listen on "+addr, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("etcd of cluster %s failed to start: %w", c.name, p.failure())
		}
		err := netnsutil.RunPath(nsPath(labPrefix), func() error {
			conn, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				conn.Close()
			}
			return err
		})
		return err == nil, nil
	})
}

// writeConfigs writes each cluster's etcd config, its mesh directory
// with a file per other cluster and its empty --lb-state-file.
func (l *lab) writeConfigs() error {
	for _, c := range l.p.clusters {
		if err := os.MkdirAll(dir(c.name, "mesh"), 0o700); err != nil {
			return fmt.Errorf("create mesh directory of %s: %w", c.name, err)
		}
		if err := os.WriteFile(dir(c.name, "etcd.yaml"), l.etcdConfig(c), 0o600); err != nil {
			return fmt.Errorf("write etcd config of %s: %w", c.name, err)
		}
		// No services until the global service walk-through writes them.
		if err := os.WriteFile(servicesFile(c), nil, 0o600); err != nil {
			return fmt.Errorf("write the services of %s: %w", c.name, err)
		}
		for _, o := range l.p.clusters {
			if o == c {
				continue
			}
			if err := os.WriteFile(dir(c.name, "mesh", o.name), l.etcdConfig(o), 0o600); err != nil {
				return fmt.Errorf("write mesh config of %s: %w", o.name, err)
			}
		}
	}
	return nil
}

// etcdConfig is the etcd config file of cluster c's etcd.
func (l *lab) etcdConfig(c *cluster) []byte {
	return fmt.Appendf(nil, "endpoints:\n- https://%s:2379\ntrusted-ca-file: %s\ncert-file: %s\nkey-file: %s\n",
		c.etcdIP, l.ca.path("ca.crt"), l.ca.path("agent.crt"), l.ca.path("agent.key"))
}

// poll calls check until it is done, fails, ctx ends or timeout passes.
func poll(ctx context.Context, timeout time.Duration, what string, check func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		done, err := check()
		if err != nil || done {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: not done within %s", what, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// itoa is strconv.Itoa.
func itoa(i int) string { return strconv.Itoa(i) }
