package identitycell

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/labels"
)

// Cell provides the identity.Allocator: reserved identities, global
// identities of this cluster from the kvstore (or from memory in
// standalone mode, when --kvstore is empty), local CIDR identities, the
// identity cache with its observers (identitycache.ObserverOut), the "Identities"
// status line, GET /v1/identity[/{id}], the garbage collector of
// unreferenced identities, and the --labels filter of identity-relevant
// labels. It needs the kvstore client and the local-node store (its
// address suffixes this node's references, its cluster gives the range).
var Cell = cell.Module("identity", "Security identities: allocator, cache, local CIDR identities",
	cell.Config(DefaultConfig),
	cell.Config(labels.Config{}),
	cell.ProvidePrivate(NewMetrics, newManagerCell),
	cell.Provide(
		func(m *identitycache.Manager) identity.Allocator { return m },
		func(m *identitycache.Manager) identitycache.RemoteIdentities { return m.Remote() },
		newLabelsFilter,
		newStatusProvider,
		newListHandler,
		newGetHandler,
		newMetricsOut,
	),
)

// newLabelsFilter builds the --labels filter (Config.Validate has
// compiled it once already, so a bad expression stopped the agent).
func newLabelsFilter(cfg labels.Config) (*labels.Filter, error) { return labels.NewFilter(cfg.Labels) }

// syncLocalKeysInterval is how often the references of the identities in
// use on this node are checked and repaired.
const syncLocalKeysInterval = 5 * time.Minute

// Config configures the identity allocator.
type Config struct {
	// IdentityGCInterval is how often this agent tries to collect the
	// unreferenced identities of its cluster in the kvstore (one agent
	// at a time does); 0 disables it on this agent.
	IdentityGCInterval time.Duration
}

// DefaultConfig is Cilium's default.
var DefaultConfig = Config{IdentityGCInterval: 15 * time.Minute}

// Flags registers --identity-gc-interval.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Duration("identity-gc-interval", def.IdentityGCInterval,
		"How often to collect unreferenced identities in the kvstore (one agent at a time; 0 disables it on this agent)")
}

// Validate rejects negative intervals.
func (c *Config) Validate() error {
	if c.IdentityGCInterval < 0 {
		return fmt.Errorf("--identity-gc-interval: %s is negative", c.IdentityGCInterval)
	}
	return nil
}

type managerParams struct {
	cell.In

	LocalNode    localnode.Store
	Config       Config
	Filter       *labels.Filter
	KVStore      kvstore.Client
	StoreMetrics *store.Metrics      `optional:"true"`
	Observers    []identity.Observer `group:"identity-observers"`
	Metrics      *Metrics
	K8sCaches    k8s.CacheSync `optional:"true"`
	StateDir     statedir.Dir  `optional:"true"`
	Lifecycle    cell.Lifecycle
	Jobs         job.Group
	Log          *slog.Logger
}

// newManagerCell builds the allocator; in kvstore mode the start hook
// creates the kvstore allocator, its references suffixed with the
// node's address, and starts its jobs (watch, reference repair, GC).
func newManagerCell(p managerParams) *identitycache.Manager {
	local := p.LocalNode.Get()
	cluster := local.Cluster
	m := identitycache.New(cluster, p.Filter, p.KVStore.Enabled(), p.Observers)
	p.Lifecycle.Append(cell.Hook{OnStart: func(cell.HookContext) error {
		defer m.NotifyReserved()
		if p.StateDir != nil {
			// Before any allocation: a restarted agent gives every label
			// set the number its BPF maps hold.
			if err := m.PersistTo(p.StateDir.Path()); err != nil {
				return fmt.Errorf("restore identity numbers: %w", err)
			}
		}
		first, last := identity.ClusterRange(cluster)
		if !m.KVStoreMode() {
			p.Log.Info("Allocating global identities in memory (standalone mode: --kvstore is empty)",
				"cluster", cluster.ClusterName, "range", fmt.Sprintf("%d..%d", first, last))
			return nil
		}
		suffix := local.IP.String()
		a, err := m.StartKVStore(p.KVStore, suffix, p.Log, p.StoreMetrics)
		if err != nil {
			return err
		}
		p.Log.Info("Allocating global identities through the kvstore", "cluster", cluster.ClusterName,
			"range", fmt.Sprintf("%d..%d", first, last), "node-suffix", suffix)
		p.Jobs.Add(
			job.OneShot("identity-watch", func(ctx context.Context, _ cell.Health) error {
				a.Run(ctx)
				return nil
			}),
			job.Timer("identity-sync-local-keys", a.SyncLocalKeys, syncLocalKeysInterval),
		)
		if p.Config.IdentityGCInterval > 0 {
			p.Jobs.Add(job.Timer("identity-gc", func(ctx context.Context) error {
				if p.K8sCaches != nil {
					// The pods' identities are referenced once their
					// endpoints have their labels.
					if err := p.K8sCaches.WaitForCacheSync(ctx); err != nil {
						return err
					}
				}
				stats, err := a.RunGC(ctx)
				p.Metrics.GCDeleted.Add(float64(stats.Deleted))
				return err
			}, p.Config.IdentityGCInterval))
		}
		return nil
	}, OnStop: func(cell.HookContext) error { return m.ClosePersistence() }})
	return m
}

func newMetricsOut(m *Metrics, mgr *identitycache.Manager) metrics.GroupOut {
	return metrics.NewGroupOut(m, countCollector{m: mgr, desc: m.Identities})
}
