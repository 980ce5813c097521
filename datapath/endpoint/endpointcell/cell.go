package endpointcell

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
	"github.com/apiary-net/apiary/datapath/tunnel"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Cell provides the endpoint manager (*endpoint.Manager), its IPAM
// (*ipam.IPAM) and its API.
// It needs datapath.EndpointLinks (datapath/linux, or datapathtest),
// the identity, ipcache and policy cells, the local-node store (its pod
// CIDRs) and the state dir; with a datapath.Loader and a
// datapath.PolicyMapWriter it attaches programs and writes policy maps.
var Cell = cell.Module("endpoint-manager", "Endpoint manager: IPAM, endpoint plumbing, regeneration, restore",
	cell.ProvidePrivate(newIncremental),
	cell.Provide(
		newIPAM,
		newIPAMStatus,
		newManager,
		newObserver,
		newStatusProvider,
		newPutHandler,
		newDeleteHandler,
		newListHandler,
		newGetHandler,
	),
	cell.Invoke(func(*endpoint.Manager) {}),
)

// incrementalDelay is the quiet period after identity changes before
// their map-state changes are written.
const incrementalDelay = 10 * time.Millisecond

type managerParams struct {
	cell.In

	Links      datapath.EndpointLinks
	Loader     datapath.Loader          `optional:"true"`
	PolicyMaps datapath.PolicyMapWriter `optional:"true"`
	Local      localnode.Store
	Identities identity.Allocator
	IPCache    ipcache.IPCache
	Policy     *policy.Repository
	Regen      policy.RegenerationRequests
	StateDir   statedir.Dir
	Lifecycle  cell.Lifecycle
	Jobs       job.Group
	Log        *slog.Logger
	Inc        *incremental
	IPAM       *ipam.IPAM
	Remotes    datapath.RemoteSync `optional:"true"`
	K8sCaches  k8s.CacheSync       `optional:"true"`
	Routing    tunnel.Config       `optional:"true"` // the veths' MTU leaves room for the tunnel header
}

// incremental is the trigger that writes identity-driven map-state
// changes; the identity observer fires it. It does not depend on the
// manager (which needs the identity allocator, which needs the
// observers); the manager sets apply.
type incremental struct {
	trigger *job.Trigger
	apply   atomic.Pointer[func(context.Context) error]
}

func newIncremental() *incremental {
	inc := &incremental{}
	inc.trigger = job.NewTrigger("endpoint-policy-incremental", func(ctx context.Context, _ []string) error {
		if fn := inc.apply.Load(); fn != nil {
			return (*fn)(ctx)
		}
		return nil
	}, job.TriggerParams{After: incrementalDelay})
	return inc
}

// newManager builds the IPAM and the manager; at start it restores the
// endpoints' addresses and veths, then (a job) their identities and
// policy.
func newManager(p managerParams) (*endpoint.Manager, error) {
	local := p.Local.Get()
	m := endpoint.New(endpoint.Params{
		Links: p.Links, Loader: p.Loader, PolicyMaps: p.PolicyMaps, IPAM: p.IPAM,
		Identities: p.Identities, IPCache: p.IPCache, Policy: p.Policy,
		StateDir: p.StateDir.Path(), ClusterName: local.Cluster.ClusterName, Log: p.Log,
		MTU: p.Routing.EndpointMTU(),
	})
	apply := m.ApplyIncremental
	p.Inc.apply.Store(&apply)
	gates := syncGates{newRemotesGate(p.Remotes, p.Log), newK8sGate(p.K8sCaches, p.Log)}
	p.Regen.Subscribe(func(ctx context.Context, reasons []string) error {
		if err := gates.wait(ctx); err != nil {
			return err
		}
		return m.Regenerate(ctx, reasons)
	})
	p.Lifecycle.Append(cell.Hook{OnStart: func(ctx cell.HookContext) error {
		m.RestoreLocal(ctx)
		p.Jobs.Add(gates.jobs()...)
		p.Jobs.Add(job.OneShot("endpoint-restore", func(ctx context.Context, _ cell.Health) error {
			if err := gates.wait(ctx); err != nil {
				return err
			}
			return m.RestoreIdentities(ctx)
		}, job.WithRetry(-1, job.Backoff{Min: time.Second, Max: time.Minute})), p.Inc.trigger)
		return nil
	}})
	return m, nil
}

// newObserver fires the incremental trigger on identity changes: the
// selector cache (another observer) has updated the endpoints' policies
// by the time it runs.
func newObserver(inc *incremental) identitycache.ObserverOut {
	return identitycache.ObserverOut{Observer: observerFunc(func([]identity.Change) {
		inc.trigger.Trigger("identities changed")
	})}
}

type observerFunc func([]identity.Change)

func (f observerFunc) OnIdentitiesChanged(ch []identity.Change) { f(ch) }
