package nodesync

import (
	"fmt"
	"log/slog"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode"
)

// watcher gives the local-node store the pod CIDRs of its Node, once:
// Kubernetes does not change spec.podCIDRs once set (a Node recreated
// with other CIDRs needs an agent restart, and is reported).
type watcher struct {
	local  localnode.Store
	log    *slog.Logger
	health cell.Health
}

// report sets the module's health from the store.
func (w watcher) report(name string) {
	n := w.local.Get()
	if !n.IPv4AllocCIDR.IsValid() && !n.IPv6AllocCIDR.IsValid() {
		w.health.OK("waiting for spec.podCIDRs of node " + name)
		return
	}
	w.health.OK(fmt.Sprintf("pod CIDRs of node %s: %s", name, cidrsString(n.IPv4AllocCIDR, n.IPv6AllocCIDR)))
}

func (w watcher) upsert(k *corev1.Node) {
	cidrs := Convert(k).PodCIDRs
	if len(cidrs) == 0 {
		return
	}
	v4, v6, err := localnode.ParsePodCIDRs(cidrs)
	if err != nil {
		err = fmt.Errorf("node %s: field spec.podCIDRs: %w", k.Name, err)
		w.log.Error("Node's pod CIDRs refused", "node", k.Name, "error", err)
		w.health.Degraded("bad spec.podCIDRs", err)
		return
	}
	n := w.local.Get()
	switch {
	case !n.IPv4AllocCIDR.IsValid() && !n.IPv6AllocCIDR.IsValid():
		w.log.Info("Pod CIDRs from the Node's spec.podCIDRs", "node", k.Name, "ipv4", v4, "ipv6", v6)
		w.local.Update(func(n *localnode.LocalNode) { n.IPv4AllocCIDR, n.IPv6AllocCIDR = v4, v6 })
		w.report(k.Name)
	case n.IPv4AllocCIDR != v4 || n.IPv6AllocCIDR != v6:
		err := fmt.Errorf("node %s: spec.podCIDRs is %s, the agent uses %s: restart the agent to take the new CIDRs",
			k.Name, cidrsString(v4, v6), cidrsString(n.IPv4AllocCIDR, n.IPv6AllocCIDR))
		w.log.Warn("Node's pod CIDRs changed", "error", err)
		w.health.Degraded("spec.podCIDRs changed", err)
	}
}

func cidrsString(v4, v6 netip.Prefix) string {
	switch {
	case v4.IsValid() && v6.IsValid():
		return v4.String() + "," + v6.String()
	case v4.IsValid():
		return v4.String()
	}
	return v6.String()
}
