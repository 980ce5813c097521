package identity

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/store"
)

// Cell provides the identity Allocator: reserved identities, global
// identities of this cluster from the kvstore (or from memory in
// standalone mode, when --kvstore is empty), local CIDR identities, the
// identity cache with its observers (ObserverOut), the "Identities"
// status line, GET /v1/identity[/{id}] and the garbage collector of
// unreferenced identities. It needs kvstore.Cell. The node manager may
// provide LocalNodeIP, the suffix of this node's references.
var Cell = cell.Module("identity", "Security identities: allocator, cache, local CIDR identities",
	cell.Config(DefaultClusterConfig),
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(NewMetrics, newManagerCell),
	cell.Provide(
		func(m *manager) Allocator { return m },
		newStatusProvider,
		newListHandler,
		newGetHandler,
		newMetricsOut,
	),
)

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

	ClusterConfig ClusterConfig
	Config        Config
	// KVStore comes before Jobs: its start hook must run before the
	// job group's.
	KVStore      kvstore.Client
	NodeIP       LocalNodeIP    `optional:"true"`
	StoreMetrics *store.Metrics `optional:"true"`
	Observers    []Observer     `group:"identity-observers"`
	Metrics      *Metrics
	Lifecycle    cell.Lifecycle
	Jobs         job.Group
	Log          *slog.Logger
}

// newManagerCell builds the allocator; in kvstore mode the start hook
// finds the node's suffix, creates the kvstore allocator and starts its
// jobs (watch, reference repair, GC).
func newManagerCell(p managerParams) *manager {
	m := newManager(p.ClusterConfig, p.KVStore.Enabled(), p.Observers)
	p.Lifecycle.Append(cell.Hook{OnStart: func(cell.HookContext) error {
		defer m.notify.flush() // the reserved identities
		first, last := p.ClusterConfig.IdentityRange()
		if m.kv == nil {
			p.Log.Info("Allocating global identities in memory (standalone mode: --kvstore is empty)",
				"cluster", p.ClusterConfig.ClusterName, "range", fmt.Sprintf("%d..%d", first, last))
			return nil
		}
		suffix, source, err := nodeSuffix(&p.NodeIP)
		if err != nil {
			return err
		}
		opts := m.kv.allocatorOptions()
		opts.Backend, opts.Suffix, opts.Logger, opts.Metrics = p.KVStore, suffix, p.Log, p.StoreMetrics
		a, err := allocator.New(opts)
		if err != nil {
			return err
		}
		m.kv.setAllocator(a)
		p.Log.Info("Allocating global identities through the kvstore", "cluster", p.ClusterConfig.ClusterName,
			"range", fmt.Sprintf("%d..%d", first, last), "node-suffix", suffix, "suffix-from", source)
		p.Jobs.Add(
			job.OneShot("identity-watch", func(ctx context.Context, _ cell.Health) error {
				a.Run(ctx)
				return nil
			}),
			job.Timer("identity-sync-local-keys", a.SyncLocalKeys, syncLocalKeysInterval),
		)
		if p.Config.IdentityGCInterval > 0 {
			p.Jobs.Add(job.Timer("identity-gc", func(ctx context.Context) error {
				stats, err := a.RunGC(ctx)
				p.Metrics.GCDeleted.Add(float64(stats.Deleted))
				return err
			}, p.Config.IdentityGCInterval))
		}
		return nil
	}})
	return m
}

type metricsOut struct {
	cell.Out

	Collectors []prometheus.Collector `group:"metrics,flatten"`
}

func newMetricsOut(metrics *Metrics, m *manager) metricsOut {
	return metricsOut{Collectors: []prometheus.Collector{
		metrics.GCDeleted, countCollector{m: m, desc: metrics.Identities},
	}}
}
