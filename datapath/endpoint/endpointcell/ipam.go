package endpointcell

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
)

type ipamParams struct {
	cell.In

	Config    localnode.Config
	Local     localnode.Store
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

// newIPAM builds the endpoints' address allocator of the node's pod
// CIDRs. With --ipam=kubernetes and a Node without spec.podCIDRs yet, it
// waits: endpoint creation fails with ipam.ErrWaitingForCIDR (503, CNI
// code 11: kubelet retries) until the local-node store gets the CIDRs
// (cells/localnode/nodesync watches the Node).
func newIPAM(p ipamParams) (*ipam.IPAM, error) {
	local := p.Local.Get()
	if p.Config.IPAM != localnode.IPAMKubernetes || local.IPv4AllocCIDR.IsValid() || local.IPv6AllocCIDR.IsValid() {
		a, err := ipam.New(local.IPv4AllocCIDR, local.IPv6AllocCIDR)
		if err != nil {
			return nil, fmt.Errorf("--pod-cidr: %w", err)
		}
		return a, nil
	}
	a := ipam.NewWaiting("spec.podCIDRs of node " + local.Name)
	var unsubscribe func()
	set := func(n localnode.LocalNode) {
		if a.Waiting() == "" || !n.IPv4AllocCIDR.IsValid() && !n.IPv6AllocCIDR.IsValid() {
			return
		}
		err := a.SetCIDRs(n.IPv4AllocCIDR, n.IPv6AllocCIDR)
		if a.Waiting() != "" {
			p.Log.Error("Pod CIDRs of the Node refused", "node", n.Name, "error", err)
			return
		}
		p.Log.Info("IPAM: pod CIDRs from the Node", "node", n.Name, "ipv4", n.IPv4AllocCIDR, "ipv6", n.IPv6AllocCIDR)
		if err != nil {
			p.Log.Warn("Restored endpoint addresses outside the Node's pod CIDRs", "error", err)
		}
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			p.Log.Info("IPAM: Waiting for the Node's spec.podCIDRs", "node", local.Name)
			unsubscribe = p.Local.Subscribe(set)
			set(p.Local.Get()) // an update between construction and now
			return nil
		},
		OnStop: func(cell.HookContext) error {
			unsubscribe()
			return nil
		},
	})
	return a, nil
}

// newIPAMStatus adds the "IPAM" line to `apiary status`: the mode, the
// CIDRs and how many addresses are used, or a Warning while waiting for
// the Node's spec.podCIDRs.
func newIPAMStatus(id cell.FullModuleID, cfg localnode.Config, a *ipam.IPAM) status.ProviderOut {
	return status.NewProviderOut(id, "IPAM", func(context.Context) status.Report {
		return ipamReport(cfg.IPAM, a)
	})
}

func ipamReport(mode string, a *ipam.IPAM) status.Report {
	if what := a.Waiting(); what != "" {
		return status.Report{State: status.Warning, Message: "Waiting for " + what,
			Details: []string{"endpoints get no address until kube-controller-manager (--allocate-node-cidrs) sets the Node's spec.podCIDRs; CNI ADD fails with code 11 (retried)"}}
	}
	v4, v6 := a.CIDRs()
	var cidrs []string
	for _, c := range []netip.Prefix{v4, v6} {
		if c.IsValid() {
			cidrs = append(cidrs, c.String())
		}
	}
	if len(cidrs) == 0 {
		return status.Report{State: status.Disabled, Message: mode + ": no pod CIDR (--pod-cidr): endpoints get no address"}
	}
	return status.Report{State: status.Ok,
		Message: fmt.Sprintf("%s: %s, %d addresses allocated", mode, strings.Join(cidrs, ", "), len(a.Allocated()))}
}
