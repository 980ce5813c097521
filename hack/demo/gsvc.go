package main

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/policy/labels"
)

// The global service walk-through: the seed's rebel-base Service in two
// clusters, an x-wing in the first calling it through the BPF load
// balancer of its node (docs/demo.md, "The global service walk-through").
const (
	gsvcNamespace = "default"
	gsvcPort      = 80
	// gsvcCalls are the calls of the first step (both clusters must
	// answer: with half the backends in each, all 30 going to one
	// cluster has a chance of 2^-29), gsvcStepCalls those of the others.
	gsvcCalls     = 30
	gsvcStepCalls = 20
	gsvcTimeout   = 2 * time.Second
	// gsvcFirstID is the first endpoint id of the walk-through's pods on
	// a node (the scenario's pods have 1, 2, ...).
	gsvcFirstID = 100
)

// gsvcPod is a pod of the walk-through.
type gsvcPod struct {
	name   string // rebel-base-0, x-wing-0
	node   *node
	id     uint16
	ip     netip.Addr
	server *proc
}

// ns is the pod's network namespace (swept as a pod's).
func (po *gsvcPod) ns() string { return labPrefix + "-pod-" + po.node.cluster.name + "-" + po.name }

func (po *gsvcPod) String() string {
	return fmt.Sprintf("%s/%s/%s on %s (%s)", po.node.cluster.name, gsvcNamespace, po.name, po.node.name, po.ip)
}

// walkthrough is the state of the global service walk-through.
type walkthrough struct {
	l             *lab
	local, remote *cluster
	xwing         *gsvcPod
	bases         map[*cluster][]*gsvcPod
	vips          map[*cluster]netip.Addr
	affinity      string         // cluster1's service.cilium.io/affinity ("": none)
	names         map[string]int // cluster/prefix -> next pod number
	ids           map[*node]int  // next endpoint id - gsvcFirstID
}

// servicesFile is cluster c's --lb-state-file.
func servicesFile(c *cluster) string { return dir(c.name, "services.yaml") }

// globalServices runs the walk-through on the scenario's cluster and
// the next one; it returns what went wrong.
func (l *lab) globalServices(ctx context.Context) error {
	w := &walkthrough{l: l, local: l.p.clusters[0], remote: l.p.clusters[1],
		bases: map[*cluster][]*gsvcPod{}, names: map[string]int{}, ids: map[*node]int{},
		vips: map[*cluster]netip.Addr{}}
	for i, c := range []*cluster{w.local, w.remote} {
		w.vips[c] = netip.AddrFrom4([4]byte{10, 96, byte(100 * (i + 1)), 10})
		for _, pc := range l.p.clusters {
			for _, n := range pc.nodes {
				if n.podCIDRs[v4].Contains(w.vips[c]) {
					return fmt.Errorf("the ClusterIP %s of %s is in the pod CIDR %s of %s", w.vips[c], c.name, n.podCIDRs[v4], n.name)
				}
			}
		}
	}
	fmt.Fprintf(l.out, "\nGlobal services: the seed's rebel-base in %s and %s, an x-wing in %s calling it\n", w.local.name, w.remote.name, w.local.name)
	fmt.Fprintf(l.out, "  (each call a new TCP connection, translated per packet by from_container on %s: the agents run without --bpf-lb-sock)\n", w.local.nodes[0].name)
	start := time.Now()
	if err := w.setUp(ctx); err != nil {
		return err
	}
	var errs []error
	for _, step := range []func(context.Context) error{w.stepGlobal, w.stepAffinity, w.stepFailover, w.stepBack} {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		errs = append(errs, step(ctx))
	}
	fmt.Fprintf(l.out, "Global services walk-through done in %s\n", time.Since(start).Round(100*time.Millisecond))
	return errors.Join(errs...)
}

// setUp creates the pods, writes both clusters' Service and waits until
// the x-wing's node balances to all of them and its ClusterMesh line
// counts the service, then shows it as a user would look at it.
func (w *walkthrough) setUp(ctx context.Context) error {
	var err error
	if w.xwing, err = w.createPod(ctx, w.local.nodes[0], "x-wing", "app=x-wing"); err != nil {
		return err
	}
	for _, c := range []*cluster{w.local, w.remote} {
		if err := w.addBases(ctx, c); err != nil {
			return err
		}
	}
	fmt.Fprintln(w.l.out, "  pods (endpoints through their node's agent, as the CNI plugin creates them):")
	for _, po := range slices.Concat([]*gsvcPod{w.xwing}, w.bases[w.local], w.bases[w.remote]) {
		fmt.Fprintf(w.l.out, "    %s\n", po)
	}
	for _, c := range []*cluster{w.local, w.remote} {
		if err := w.writeService(c); err != nil {
			return err
		}
	}
	fmt.Fprintf(w.l.out, "  the Service %s/rebel-base, annotated service.cilium.io/global: \"true\", with an EndpointSlice of its cluster's rebel-base pods, in each cluster's --lb-state-file (%s: ClusterIP %s, %s: %s)\n",
		gsvcNamespace, w.local.name, w.vips[w.local], w.remote.name, w.vips[w.remote])
	if err := w.waitBackends(ctx, w.ips(w.local), w.ips(w.remote)); err != nil {
		return err
	}
	// The status lines are probed apart from the maps: the line shown
	// must already count the service.
	if err := w.waitGlobalLine(ctx); err != nil {
		return err
	}
	n := w.xwing.node
	for _, args := range [][]string{{"status"}, {"service", "list"}} {
		out, err := w.l.cli(n, args...)
		if err != nil {
			return fmt.Errorf("apiary %s on %s: %w: %s", strings.Join(args, " "), n.name, err, out)
		}
		fmt.Fprintf(w.l.out, "$ apiary --socket %s %s", dir(n.name, "apiary.sock"), strings.Join(args, " "))
		if args[0] == "status" {
			fmt.Fprint(w.l.out, " | grep ClusterMesh")
		}
		fmt.Fprintln(w.l.out)
		for _, line := range strings.SplitAfter(string(out), "\n") {
			if args[0] != "status" || strings.HasPrefix(line, "ClusterMesh") {
				fmt.Fprint(w.l.out, line)
			}
		}
	}
	return nil
}

// addBases creates a rebel-base pod on each node of c, answering with
// c's name.
func (w *walkthrough) addBases(ctx context.Context, c *cluster) error {
	for _, n := range c.nodes {
		po, err := w.createPod(ctx, n, "rebel-base", "app=rebel-base")
		if err != nil {
			return err
		}
		body := fmt.Sprintf(`{"Galaxy": "Alderaan", "Cluster": %q}`, c.name)
		po.server, err = w.l.runServer(ctx, "server of "+c.name+"/"+po.name, po.ns(), []string{"serve",
			"--ready=" + dir("ready", po.ns()), "--addr=" + po.ip.String(), "--http=" + itoa(gsvcPort), "--http-body=" + body})
		if err != nil {
			return err
		}
		w.bases[c] = append(w.bases[c], po)
	}
	return nil
}

// createPod creates a pod named <prefix>-<n> on node n with the label,
// through its agent's API, and waits until it is ready.
func (w *walkthrough) createPod(ctx context.Context, n *node, prefix, label string) (*gsvcPod, error) {
	key := n.cluster.name + "/" + prefix
	po := &gsvcPod{name: fmt.Sprintf("%s-%d", prefix, w.names[key]), node: n, id: uint16(gsvcFirstID + w.ids[n])}
	w.names[key]++
	w.ids[n]++
	if err := netnsutil.NewNamed(po.ns()); err != nil {
		return nil, err
	}
	req := models.EndpointRequest{NetNSPath: nsPath(po.ns()), InterfaceName: "eth0",
		PodNamespace: gsvcNamespace, PodName: po.name,
		Labels: []string{label, labels.PrefixNamespaceLabels + ".kubernetes.io/metadata.name=" + gsvcNamespace,
			labels.KeyPodNamespace + "=" + gsvcNamespace}}
	c := w.l.client[n]
	var ep *models.Endpoint
	var lastErr error
	err := poll(ctx, 30*time.Second, "the endpoint of pod "+po.name+" on "+n.name, func() (bool, error) {
		// Retried as the kubelet retries a pod's CNI ADD: once an
		// identity allocation failed on a lost etcd connection.
		var err error
		if ep, err = c.EndpointPut(ctx, po.id, req); err != nil {
			if lastErr == nil {
				fmt.Fprintf(w.l.out, "  note: create pod %s/%s on %s failed, retrying: %v\n", gsvcNamespace, po.name, n.name, err)
			}
			lastErr = err
		}
		return err == nil, nil
	})
	if err != nil {
		return nil, fmt.Errorf("create pod %s/%s on %s: %w (last: %v)", gsvcNamespace, po.name, n.name, err, lastErr)
	}
	w.l.gsvcPods = append(w.l.gsvcPods, po)
	if po.ip, err = netip.ParseAddr(ep.IPv4); err != nil {
		return nil, fmt.Errorf("create pod %s/%s on %s: the agent gave it no IPv4 address (%q)", gsvcNamespace, po.name, n.name, ep.IPv4)
	}
	err = poll(ctx, 60*time.Second, "pod "+po.name+" on "+n.name+" ready", func() (bool, error) {
		ep, err := c.Endpoint(ctx, po.id)
		if err == nil && ep.State == "not-ready" {
			return false, fmt.Errorf("pod %s/%s on %s: endpoint not-ready: %s", gsvcNamespace, po.name, n.name, ep.Error)
		}
		return err == nil && ep.State == "ready", nil
	})
	return po, err
}

// deleteBases deletes c's rebel-base pods: their server ends and their
// endpoint is deleted, as a deleted pod's CNI DEL does.
func (w *walkthrough) deleteBases(ctx context.Context, c *cluster) error {
	for _, po := range w.bases[c] {
		po.server.stop(5 * time.Second)
		if err := w.l.client[po.node].EndpointDelete(ctx, po.id); err != nil {
			return fmt.Errorf("delete pod %s/%s on %s: %w", gsvcNamespace, po.name, po.node.name, err)
		}
	}
	w.bases[c] = nil
	return nil
}

// ips are the addresses of c's rebel-base pods.
func (w *walkthrough) ips(c *cluster) []netip.Addr {
	var out []netip.Addr
	for _, po := range w.bases[c] {
		out = append(out, po.ip)
	}
	return out
}

// writeService replaces c's --lb-state-file (rename: the agents never
// read half a file) with the Service rebel-base and its EndpointSlice of
// c's rebel-base pods, as Kubernetes would hold them.
func (w *walkthrough) writeService(c *cluster) error {
	path := servicesFile(c)
	if err := os.WriteFile(path+".tmp", []byte(w.serviceDoc(c)), 0o600); err != nil {
		return fmt.Errorf("write the services of %s: %w", c.name, err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("write the services of %s: %w", c.name, err)
	}
	return nil
}

// serviceDoc is c's --lb-state-file.
func (w *walkthrough) serviceDoc(c *cluster) string {
	annotations := `service.cilium.io/global: "true"`
	if c == w.local && w.affinity != "" {
		annotations += ", service.cilium.io/affinity: " + w.affinity
	}
	var eps []string
	for _, po := range w.bases[c] {
		eps = append(eps, fmt.Sprintf("\n  - {addresses: [%s], nodeName: %s, conditions: {ready: true}}", po.ip, po.node.name))
	}
	if len(eps) == 0 {
		eps = []string{" []"}
	}
	return fmt.Sprintf(`# The seed's rebel-base Service of %[1]s (written by the demo runner).
services:
- metadata:
    name: rebel-base
    namespace: %[2]s
    annotations: {%[3]s}
  spec:
    type: ClusterIP
    clusterIP: %[4]s
    selector: {app: rebel-base}
    ports: [{name: http, port: %[5]d, protocol: TCP}]
endpoints:
- metadata:
    name: rebel-base-%[1]s
    namespace: %[2]s
    labels: {kubernetes.io/service-name: rebel-base}
  addressType: IPv4
  ports: [{name: http, port: %[5]d, protocol: TCP}]
  endpoints:%[6]s
`, c.name, gsvcNamespace, annotations, w.vips[c], gsvcPort, strings.Join(eps, ""))
}

// frontend is the x-wing's ClusterIP frontend as the BPF maps spell it.
func (w *walkthrough) frontend() string {
	return netip.AddrPortFrom(w.vips[w.local], gsvcPort).String() + "/TCP"
}

// waitBackends waits until the BPF service map of the x-wing's node
// balances its ClusterIP to exactly the given pods (the active slots).
func (w *walkthrough) waitBackends(ctx context.Context, want ...[]netip.Addr) error {
	var wantAddrs []string
	for _, ips := range want {
		for _, ip := range ips {
			wantAddrs = append(wantAddrs, netip.AddrPortFrom(ip, gsvcPort).String()+"/TCP")
		}
	}
	slices.Sort(wantAddrs)
	n := w.xwing.node
	var last []string
	err := poll(ctx, 30*time.Second, "the BPF service map of "+n.name+" to balance "+w.frontend()+" to "+strings.Join(wantAddrs, " "), func() (bool, error) {
		last = nil
		for page, err := range w.l.client[n].BPFLBPages(ctx, client.ListOptions{}) {
			if err != nil {
				return false, nil
			}
			for _, s := range page.Items {
				if s.Frontend != w.frontend() {
					continue
				}
				for _, b := range s.Backends {
					if int(b.Slot) >= 1 && int(b.Slot) <= int(s.Count) {
						last = append(last, b.Address)
					}
				}
			}
		}
		slices.Sort(last)
		return slices.Equal(last, wantAddrs), nil
	})
	if err != nil {
		return fmt.Errorf("%w (it has: %s)", err, strings.Join(last, " "))
	}
	return nil
}

// waitGlobalLine waits (up to 10s: the agent probes its status lines
// every 5s) until the x-wing node's ClusterMesh line counts the global
// service.
func (w *walkthrough) waitGlobalLine(ctx context.Context) error {
	n := w.xwing.node
	err := poll(ctx, 10*time.Second, "the ClusterMesh line of "+n.name+" to count 1 global service", func() (bool, error) {
		st, err := w.l.client[n].Status(ctx)
		if err != nil {
			return false, nil
		}
		for _, e := range st.Entries {
			if e.Name == "ClusterMesh" && strings.HasSuffix(e.Message, ", 1 global-services") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		fmt.Fprintf(w.l.out, "(%v)\n", err)
	}
	return err
}
