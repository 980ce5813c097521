package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// nodeNS is the namespace name of node n.
func nodeNS(n *node) string { return labPrefix + "-" + n.name }

// nodes creates each node's namespace on the underlay, with a default
// route of each family to the outside host.
func (l *lab) nodes(context.Context) error {
	lab, err := handleAt(nsPath(labPrefix))
	if err != nil {
		return err
	}
	defer lab.Close()
	for _, c := range l.p.clusters {
		for i, n := range c.nodes {
			if err := netnsutil.NewNamed(nodeNS(n)); err != nil {
				return err
			}
			h, err := underlayLink(lab, fmt.Sprintf("v%dn%d", c.id, i+1), nsPath(nodeNS(n)), l.p.underlayAddrs(n.ips)...)
			if err != nil {
				return err
			}
			for _, f := range families {
				if err == nil {
					err = h.RouteAdd(&netlink.Route{Gw: l.p.outsideIP[f].AsSlice()})
				}
			}
			h.Close()
			if err != nil {
				return fmt.Errorf("add default route of %s: %w", n.name, err)
			}
		}
	}
	return nil
}

// underlayAddrs returns ips (one per family) with the underlay's prefix
// lengths.
func (p *plan) underlayAddrs(ips [2]netip.Addr) []netip.Prefix {
	return []netip.Prefix{netip.PrefixFrom(ips[v4], p.underlay[v4].Bits()), netip.PrefixFrom(ips[v6], p.underlay[v6].Bits())}
}

// agentArgs are node n's apiary-agent flags.
func (l *lab) agentArgs(n *node) []string {
	c := n.cluster
	args := []string{
		"--socket-path=" + dir(n.name, "apiary.sock"), "--state-dir=" + dir(n.name, "state"),
		"--bpf-root=" + filepath.Join(bpfDir, n.name),
		"--cluster-name=" + c.name, "--cluster-id=" + strconv.Itoa(c.id),
		"--node-name=" + n.name, "--node-ip=" + n.ips[v4].String() + "," + n.ips[v6].String(),
		"--pod-cidr=" + n.podCIDRs[v4].String() + "," + n.podCIDRs[v6].String(),
		"--kvstore=etcd", "--kvstore-opt=etcd.config=" + dir(c.name, "etcd.yaml"),
		"--policy-dir=" + dir(c.name, "policies"), "--lb-state-file=" + servicesFile(c),
		"--enable-hubble", "--hubble-socket-path=" + dir(n.name, "hubble.sock"),
		"--policy-default-local-cluster=" + strconv.FormatBool(l.p.scenario.PolicyDefaultLocalCluster == nil || *l.p.scenario.PolicyDefaultLocalCluster),
	}
	if len(l.p.clusters) > 1 {
		args = append(args, "--clustermesh-config="+dir(c.name, "mesh"))
	}
	if l.routingMode == "tunnel" {
		// Pods of other nodes through the VXLAN tunnel (the outside host
		// still routes the pod CIDRs, for its own traffic to the pods).
		return append(args, "--routing-mode=tunnel")
	}
	return append(args, "--auto-direct-node-routes")
}

// startAgents starts every node's agent and waits for its API.
func (l *lab) startAgents(ctx context.Context) error {
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			if err := l.startAgent(n); err != nil {
				return err
			}
		}
	}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			if err := l.waitAgent(ctx, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// startAgent starts node n's agent in its namespace.
func (l *lab) startAgent(n *node) error {
	// The pins go on a bpffs under /sys/fs/bpf, mounted first where the
	// machine has none there (a container, a minimal VM).
	if err := bpfmap.EnsureRoot(bpfDir); err != nil {
		return err
	}
	for _, d := range []string{dir(n.name), filepath.Join(bpfDir, n.name)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	p, err := startIn("apiary-agent of "+n.name, nsPath(nodeNS(n)), dir(n.name, "agent.log"), l.bins.agent, l.agentArgs(n)...)
	if err != nil {
		return err
	}
	l.agents[n] = p
	if l.client[n] == nil {
		l.client[n] = client.New(dir(n.name, "apiary.sock"))
	}
	return nil
}

// waitAgent waits until node n's agent answers /healthz.
func (l *lab) waitAgent(ctx context.Context, n *node) error {
	p := l.agents[n]
	return poll(ctx, 60*time.Second, "apiary-agent of "+n.name, func() (bool, error) {
		if p.exited() {
			return false, fmt.Errorf("apiary-agent of node %s failed to start: %w", n.name, p.failure())
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err := l.client[n].Healthz(rctx)
		return err == nil, nil
	})
}

// waitMesh waits until every agent has every other cluster ready.
func (l *lab) waitMesh(ctx context.Context) error {
	want := len(l.p.clusters) - 1
	if want == 0 {
		return nil
	}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			var last string
			err := poll(ctx, 90*time.Second, "the mesh of "+n.name, func() (bool, error) {
				if p := l.agents[n]; p.exited() {
					return false, p.failure()
				}
				cm, err := l.client[n].ClusterMesh(ctx)
				if err != nil {
					last = err.Error()
					return false, nil
				}
				ready := 0
				for _, r := range cm.Clusters {
					if r.Ready {
						ready++
					} else {
						last = r.Name + ": " + r.Status
					}
				}
				return ready == want, nil
			})
			if err != nil {
				return fmt.Errorf("%w (last: %s)", err, last)
			}
		}
	}
	return nil
}

// underlayNeighbours waits until every namespace on the underlay (the
// nodes and the outside host) answers an echo request of each family
// from every other, which resolves their neighbours. Without it the
// first IPv6 connection from the outside host to a pod waited about a
// second for its SYN's retransmission: the outside host's first
// neighbour solicitation for the node went unanswered (two sent, one
// advertisement received; the SYN waited in the host queue), for a
// reason not found. The lab's queries are about policy, not about the
// underlay's neighbours.
func (l *lab) underlayNeighbours(ctx context.Context) error {
	type host struct {
		name string
		ips  [2]netip.Addr
	}
	hosts := []host{{outsideNS, l.p.outsideIP}}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			hosts = append(hosts, host{nodeNS(n), n.ips})
		}
	}
	for _, from := range hosts {
		for _, to := range hosts {
			if from.name == to.name {
				continue
			}
			for _, f := range families {
				err := poll(ctx, 10*time.Second, fmt.Sprintf("%s to answer %s's echo request", to.ips[f], from.name), func() (bool, error) {
					s, err := sendICMP(nsPath(from.name), f, netip.Addr{}, to.ips[f], echoRequest(f), "", 300*time.Millisecond)
					return err == nil && s.answered, nil
				})
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}
