package svcmanagercell

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/healthserver"
)

// proxyHealthTimeout is how long writes may keep failing before the
// kube-proxy health check turns unhealthy: kube-proxy's (twice its
// default 30 s sync period).
const proxyHealthTimeout = time.Minute

// checkBindAddress validates --kube-proxy-replacement-healthz-bind-address
// (empty, or host:port with an IP or empty host).
func checkBindAddress(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err == nil {
		var n uint64
		if n, err = strconv.ParseUint(port, 10, 16); err == nil && n == 0 {
			err = fmt.Errorf("port 0")
		}
	}
	if err == nil && host != "" {
		_, err = netip.ParseAddr(host)
	}
	if err != nil {
		return fmt.Errorf("--kube-proxy-replacement-healthz-bind-address %q is not <IP>:<port> (such as 0.0.0.0:10256): %w", addr, err)
	}
	return nil
}

type proxyHealthParams struct {
	cell.In

	Config  Config
	Manager *svcmanager.Manager
	Node    localnode.Store
	Health  cell.HealthReporter `optional:"true"`
	Log     *slog.Logger
}

// newProxyHealth returns kube-proxy's health check on
// --kube-proxy-replacement-healthz-bind-address, nil when it is empty.
func newProxyHealth(p proxyHealthParams) *healthserver.Proxy {
	if p.Config.KubeProxyReplacementHealthzBindAddress == "" {
		return nil
	}
	return healthserver.NewProxy(p.Log, p.Config.KubeProxyReplacementHealthzBindAddress, func() healthserver.ProxyState {
		return proxyState(p.Manager, p.Health, p.Node.Get(), time.Now())
	})
}

// proxyState is the kube-proxy health of this node: healthy once the
// services are in the datapath (the initial reconcile done, no write
// failing for longer than proxyHealthTimeout) while no health scope of
// the agent is degraded (its /v1/healthz); eligible while the node is
// not being deleted.
func proxyState(m *svcmanager.Manager, h cell.HealthReporter, node localnode.LocalNode, now time.Time) healthserver.ProxyState {
	s := healthserver.ProxyState{Healthy: true, NodeEligible: !node.BeingDeleted}
	reconciled, pending, since := m.SyncState()
	switch {
	case !m.HasWriter():
		s.Healthy, s.Reason = false, "no load-balancing datapath in this agent"
	case !reconciled:
		s.Healthy, s.Reason = false, "waiting for the initial sync"
	case pending > 0 && now.Sub(since) > proxyHealthTimeout:
		s.Healthy, s.Reason = false, fmt.Sprintf("%d frontends not written since %s", pending, since.UTC().Format(time.RFC3339))
	}
	if s.Healthy && h != nil {
		for _, hs := range h.All() {
			if hs.Level == cell.LevelDegraded {
				s.Healthy, s.Reason = false, "agent degraded: "+hs.ID
				break
			}
		}
	}
	if !s.NodeEligible && s.Reason == "" {
		s.Reason = "node being deleted"
	}
	return s
}

// startProxyHealth listens on the address, trying again every
// retryInterval while it cannot (kube-proxy still holding the port, or
// the address not yet on the node), until the agent stops.
func startProxyHealth(p healthParams) {
	if p.Proxy == nil {
		return
	}
	p.Jobs.Add(job.OneShot("kube-proxy-healthz", func(ctx context.Context, _ cell.Health) error {
		for p.Proxy.Open() != nil {
			refresh(p.Status)
			select {
			case <-time.After(retryInterval):
			case <-ctx.Done():
				return nil
			}
		}
		refresh(p.Status)
		return nil
	}))
	p.Lifecycle.Append(cell.Hook{OnStop: func(cell.HookContext) error {
		p.Proxy.Close()
		return nil
	}})
}

// proxyReport adds the kube-proxy health check to the Services line r.
func proxyReport(r *status.Report, p *healthserver.Proxy) {
	if p == nil {
		return
	}
	if err := p.Failed(); err != nil {
		r.State = models.Worse(r.State, status.Warning)
		r.Message += ", kube-proxy health check not served"
		r.Details = append(r.Details, err.Error())
		return
	}
	st, code, _, _ := p.Check(true)
	r.Message += fmt.Sprintf(", kube-proxy health check on %s: %d", p.Addr(), code)
	if st.Reason != "" {
		r.Message += " (" + st.Reason + ")"
	}
}
