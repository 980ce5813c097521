package svcmanagercell

import (
	"context"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/healthserver"
)

// newHealthServer returns the health-check NodePort server, nil with
// --enable-health-check-nodeport=false. Its serviceProxyHealthy is the
// kube-proxy health check's (/livez); a manager without a datapath (an
// embedder's, whose own datapath balances) answers from the endpoints
// alone.
func newHealthServer(p proxyHealthParams) *healthserver.Server {
	if !p.Config.EnableHealthCheckNodePort {
		return nil
	}
	return healthserver.New(p.Log, "").WithProxyHealth(func() bool {
		return !p.Manager.HasWriter() || proxyState(p.Manager, p.Health, p.Node.Get(), time.Now()).Healthy
	})
}

// healthParams are what the health-check NodePorts' and the kube-proxy
// health check's jobs need (either server nil when it is off).
type healthParams struct {
	cell.In

	Manager   *svcmanager.Manager
	Server    *healthserver.Server
	Proxy     *healthserver.Proxy
	Status    status.Refresher `optional:"true"`
	Lifecycle cell.Lifecycle
	Jobs      job.Group
}

// startHealthServer keeps the server's ports those of the manager's
// health checks, with their counts, until the agent stops; a port that
// could not be opened is tried again every retryInterval.
func startHealthServer(p healthParams) {
	if p.Server == nil {
		return
	}
	p.Jobs.Add(job.OneShot("health-check-nodeports", func(ctx context.Context, _ cell.Health) error {
		for {
			p.Server.Sync(p.Manager.HealthChecks())
			refresh(p.Status)
			var retry <-chan time.Time // a port that failed is tried again
			if p.Server.Failed() != nil {
				retry = time.After(retryInterval)
			}
			select {
			case <-p.Manager.HealthChanged():
			case <-retry:
			case <-ctx.Done():
				return nil
			}
		}
	}))
	p.Lifecycle.Append(cell.Hook{OnStop: func(cell.HookContext) error {
		p.Server.Close()
		return nil
	}})
}
