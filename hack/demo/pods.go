package main

import (
	"context"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vishvananda/netlink"
	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/policy/labels"
)

// podNS is the namespace name of pod po.
func podNS(po *pod) string { return fmt.Sprintf("%s-pod%d", labPrefix, po.index) }

// outsideNS is the outside host's namespace name.
const outsideNS = labPrefix + "-outside"

// pods creates every pod: its namespace, its endpoint through its node's
// API (labels, named ports, the address) and its server.
func (l *lab) pods(ctx context.Context) error {
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			for i, po := range n.pods {
				po.id = uint16(i + 1)
				if err := l.createPod(ctx, po); err != nil {
					return err
				}
			}
		}
	}
	for _, po := range l.p.pods {
		if err := l.waitPod(ctx, po); err != nil {
			return err
		}
	}
	return nil
}

// podNameRe is a name both a namespace and a pod may have (RFC 1123 label).
var podNameRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// podRequest is the endpoint request of po: the identity labels a pod of
// its namespace gets (as simulate gives them; the agent adds the
// cluster's), its named ports and its address.
func (l *lab) podRequest(po *pod) models.EndpointRequest {
	req := models.EndpointRequest{NetNSPath: nsPath(podNS(po)), InterfaceName: "eth0"}
	for _, k := range slices.Sorted(maps.Keys(po.spec.Labels)) {
		req.Labels = append(req.Labels, k+"="+po.spec.Labels[k])
	}
	nsLabels := map[string]string{"kubernetes.io/metadata.name": po.spec.Namespace}
	for _, ns := range l.p.scenario.Namespaces {
		if ns.Name == po.spec.Namespace {
			maps.Copy(nsLabels, ns.Labels)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(nsLabels)) {
		req.Labels = append(req.Labels, labels.PrefixNamespaceLabels+"."+k+"="+nsLabels[k])
	}
	req.Labels = append(req.Labels, labels.KeyPodNamespace+"="+po.spec.Namespace)
	if podNameRe.MatchString(po.spec.Name) && podNameRe.MatchString(po.spec.Namespace) {
		// Named in Hubble's flows; a scenario name that is no pod name stays out.
		req.PodNamespace, req.PodName = po.spec.Namespace, po.spec.Name
	}
	for _, pt := range po.spec.Ports {
		req.NamedPorts = append(req.NamedPorts, models.NamedPort{Name: pt.Name, Port: uint16(pt.Port), Protocol: strings.ToUpper(pt.Protocol)})
	}
	if po.ips[v4].IsValid() {
		req.IPv4 = po.ips[v4].String()
	}
	if po.ips[v6].IsValid() {
		req.IPv6 = po.ips[v6].String()
	}
	return req
}

// createPod creates po's namespace and endpoint.
func (l *lab) createPod(ctx context.Context, po *pod) error {
	if err := netnsutil.NewNamed(podNS(po)); err != nil {
		return err
	}
	ep, err := l.client[po.node].EndpointPut(ctx, po.id, l.podRequest(po))
	if err != nil {
		return fmt.Errorf("create pod %s on %s: %w", po.ref, po.node.name, err)
	}
	for f, s := range []string{ep.IPv4, ep.IPv6} {
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return fmt.Errorf("create pod %s on %s: the agent gave it no %s address (%q)", po.ref, po.node.name, fam(f), s)
		}
		po.ips[f] = ip
	}
	return nil
}

// waitPod waits for po's endpoint to be ready and starts its server.
func (l *lab) waitPod(ctx context.Context, po *pod) error {
	c := l.client[po.node]
	var state string
	err := poll(ctx, 90*time.Second, "pod "+po.ref+" ready", func() (bool, error) {
		ep, err := c.Endpoint(ctx, po.id)
		if err != nil {
			return false, nil
		}
		state = ep.State
		if ep.State == "not-ready" {
			return false, fmt.Errorf("pod %s on %s: endpoint not-ready: %s", po.ref, po.node.name, ep.Error)
		}
		return ep.State == "ready", nil
	})
	if err != nil {
		return fmt.Errorf("%w (state %s)", err, state)
	}
	return l.startServer(ctx, "server of "+po.ref, podNS(po), po.ips[:], po.served)
}

// startServer starts `demo serve` in the named namespace and waits until
// it listens.
func (l *lab) startServer(ctx context.Context, name, ns string, addrs []netip.Addr, pts ports) error {
	args := []string{"serve", "--ready=" + dir("ready", ns)}
	for _, a := range addrs {
		args = append(args, "--addr="+a.String())
	}
	for _, pt := range pts.tcp {
		args = append(args, "--tcp="+strconv.Itoa(pt))
	}
	for _, pt := range pts.udp {
		args = append(args, "--udp="+strconv.Itoa(pt))
	}
	if pts.icmp {
		args = append(args, "--icmp-seen="+dir("icmp"))
	}
	_, err := l.runServer(ctx, name, ns, args)
	return err
}

// runServer starts `demo <args>` (a serve with --ready=<lab>/ready/<ns>)
// in the named namespace and waits until it listens.
func (l *lab) runServer(ctx context.Context, name, ns string, args []string) (*proc, error) {
	ready := dir("ready", ns)
	if err := os.MkdirAll(dir("ready"), 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir("ready"), err)
	}
	self, err := selfPath()
	if err != nil {
		return nil, err
	}
	p, err := startIn(name, nsPath(ns), dir("servers.log"), self, args...)
	if err != nil {
		return nil, err
	}
	l.procs = append(l.procs, p)
	return p, poll(ctx, 10*time.Second, name+" to listen", func() (bool, error) {
		if p.exited() {
			return false, p.failure()
		}
		_, err := os.Stat(ready)
		return err == nil, nil
	})
}

// outsideHost creates the host of the addresses that are no endpoint: a
// namespace on the underlay with those addresses, routes to every pod
// CIDR through its node, and a server on the queried ports.
func (l *lab) outsideHost(ctx context.Context) error {
	if err := netnsutil.NewNamed(outsideNS); err != nil {
		return err
	}
	lab, err := handleAt(nsPath(labPrefix))
	if err != nil {
		return err
	}
	defer lab.Close()
	h, err := underlayLink(lab, "vout", nsPath(outsideNS), l.p.underlayAddrs(l.p.outsideIP)...)
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("find lo of the outside host: %w", err)
	}
	addrs := slices.SortedFunc(maps.Keys(l.p.outside), netip.Addr.Compare)
	all := ports{}
	for _, a := range addrs {
		if err := h.AddrAdd(lo, nlAddr(netip.PrefixFrom(a, a.BitLen()))); err != nil {
			return fmt.Errorf("add %s to the outside host: %w", a, err)
		}
		for _, pt := range l.p.outside[a].tcp {
			all.add("TCP", pt)
		}
		for _, pt := range l.p.outside[a].udp {
			all.add("UDP", pt)
		}
		all.icmp = all.icmp || l.p.outside[a].icmp
	}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			for _, f := range families {
				if err := h.RouteAdd(&netlink.Route{Dst: ipnet(n.podCIDRs[f]), Gw: n.ips[f].AsSlice()}); err != nil {
					return fmt.Errorf("route %s via %s on the outside host: %w", n.podCIDRs[f], n.ips[f], err)
				}
			}
		}
	}
	if len(addrs) == 0 {
		return nil
	}
	return l.startServer(ctx, "server of the outside host", outsideNS, addrs, all)
}

// policies waits until every agent of the scenario's cluster runs the
// scenario's policies, which it reads from its --policy-dir (the lab's
// policy source outside the agents, as the Kubernetes API server is a
// cluster's: an agent that restarts reads them again; `apiary policy
// import` would survive a restart too, kept in the agent's state dir),
// and every pod there is
// regenerated with them. The other clusters have no policy: simulate
// applies the file's policies to its cluster's endpoints only.
func (l *lab) policies(ctx context.Context) error {
	if len(l.p.scenario.Policies) == 0 {
		return nil
	}
	for _, n := range l.p.cluster("").nodes {
		var rev uint64
		err := poll(ctx, 30*time.Second, "the policies of "+n.name, func() (bool, error) {
			rules, err := l.client[n].PolicyGet(ctx, nil)
			if err == nil && len(rules.Rules) > 0 {
				rev = rules.Revision
			}
			return rev > 0, nil
		})
		if err != nil {
			return err
		}
		for _, po := range n.pods {
			err := poll(ctx, 60*time.Second, "pod "+po.ref+" at policy revision "+strconv.FormatUint(rev, 10), func() (bool, error) {
				ep, err := l.client[n].Endpoint(ctx, po.id)
				return err == nil && ep.State == "ready" && ep.Policy.Revision >= rev, nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// writePolicies writes the scenario's policies into the policy
// directory of its cluster (the others get an empty one).
func (l *lab) writePolicies() error {
	var docs []byte
	for i := range l.p.scenario.Policies {
		doc, err := yaml.Marshal(&l.p.scenario.Policies[i])
		if err != nil {
			return fmt.Errorf("encode policies[%d]: %w", i, err)
		}
		docs = append(append(docs, "---\n"...), doc...)
	}
	for _, c := range l.p.clusters {
		if err := os.MkdirAll(dir(c.name, "policies"), 0o700); err != nil {
			return fmt.Errorf("create policy directory of %s: %w", c.name, err)
		}
		if c != l.p.cluster("") || len(docs) == 0 {
			continue
		}
		if err := os.WriteFile(dir(c.name, "policies", "scenario.yaml"), docs, 0o600); err != nil {
			return fmt.Errorf("write policies of %s: %w", c.name, err)
		}
	}
	return nil
}

// waitIPCache waits until every agent knows every pod's identity (the
// identity cache feeds the selector cache, which adds the peers' keys to
// the policy maps) and its BPF ipcache map has every pod's address with
// that identity (learned from its own cluster's etcd or through the
// mesh): ipcache entries and identities come from two watchers, so
// either may be first.
func (l *lab) waitIPCache(ctx context.Context) error {
	want := map[string]uint32{}
	for _, po := range l.p.pods {
		ep, err := l.client[po.node].Endpoint(ctx, po.id)
		if err != nil {
			return fmt.Errorf("read pod %s: %w", po.ref, err)
		}
		for _, ip := range po.ips {
			want[netip.PrefixFrom(ip, ip.BitLen()).String()] = ep.Identity
		}
	}
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			var missing string
			err := poll(ctx, 60*time.Second, "the BPF ipcache map of "+n.name, func() (bool, error) {
				got := map[string]uint32{}
				for page, err := range l.client[n].BPFIPCachePages(ctx, client.ListOptions{}) {
					if err != nil {
						return false, nil
					}
					for _, e := range page.Items {
						got[e.Prefix] = e.Identity
					}
				}
				for prefix, id := range want {
					if got[prefix] != id {
						missing = fmt.Sprintf("%s: identity %d, want %d", prefix, got[prefix], id)
						return false, nil
					}
				}
				ids, err := l.client[n].IdentityList(ctx)
				if err != nil {
					return false, nil
				}
				known := map[uint32]bool{}
				for _, id := range ids {
					known[id.ID] = true
				}
				for _, id := range want {
					if !known[id] {
						missing = fmt.Sprintf("identity %d unknown", id)
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				return fmt.Errorf("%w (last: %s)", err, missing)
			}
		}
	}
	return nil
}
