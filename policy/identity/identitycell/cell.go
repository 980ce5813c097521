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
// identities of this cluster from the kvstore, from CiliumIdentity
// objects (mode crd: Kubernetes without --kvstore), or from memory in
// standalone mode (neither), local CIDR identities, the
// identity cache with its observers (identitycache.ObserverOut), the "Identities"
// status line, GET /v1/identity[/{id}], the garbage collector of
// unreferenced identities, and the --labels filter of identity-relevant
// labels, and the allocation mode (identitycache.Mode) for the cells
// that follow it. It needs the kvstore client and the local-node store
// (its address suffixes this node's references, its cluster gives the
// range); mode crd needs the Kubernetes client cell.
var Cell = cell.Module("identity", "Security identities: allocator, cache, local CIDR identities",
	cell.Config(DefaultConfig),
	cell.Config(labels.Config{}),
	cell.ProvidePrivate(NewMetrics, newManagerCell),
	cell.Provide(
		func(m *identitycache.Manager) identity.Allocator { return m },
		func(m *identitycache.Manager) identitycache.RemoteIdentities { return m.Remote() },
		func(m *identitycache.Manager) identitycache.Mode { return m.Mode() },
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
	// IdentityAllocationMode is where global identities are allocated:
	// "crd" (CiliumIdentity objects), "kvstore", or empty for the
	// default: kvstore when --kvstore is set, else crd when Kubernetes
	// is configured, else in memory (standalone).
	IdentityAllocationMode string
	// IdentityGCInterval is how often this agent tries to collect the
	// unreferenced identities of its cluster (one agent at a time
	// does); 0 disables it on this agent.
	IdentityGCInterval time.Duration
	// IdentityHeartbeatTimeout is how long a CiliumIdentity stays unused
	// before the collector deletes it (mode crd).
	IdentityHeartbeatTimeout time.Duration
}

// DefaultConfig is Cilium's default.
var DefaultConfig = Config{IdentityGCInterval: 15 * time.Minute, IdentityHeartbeatTimeout: 30 * time.Minute}

// Flags registers --identity-allocation-mode, --identity-gc-interval and
// --identity-heartbeat-timeout.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("identity-allocation-mode", def.IdentityAllocationMode,
		`Where global identities are allocated: "crd" (CiliumIdentity objects) or "kvstore" (default: kvstore with --kvstore, else crd with Kubernetes, else in memory)`)
	fs.Duration("identity-gc-interval", def.IdentityGCInterval,
		"How often to collect unreferenced identities (one agent at a time; 0 disables it on this agent)")
	fs.Duration("identity-heartbeat-timeout", def.IdentityHeartbeatTimeout,
		"How long a CiliumIdentity no CiliumEndpoint uses is kept before it is deleted (mode crd)")
}

// Validate rejects negative intervals and unknown modes.
func (c *Config) Validate() error {
	switch {
	case c.IdentityGCInterval < 0:
		return fmt.Errorf("--identity-gc-interval: %s is negative", c.IdentityGCInterval)
	case c.IdentityHeartbeatTimeout <= 0:
		return fmt.Errorf("--identity-heartbeat-timeout: %s is not positive", c.IdentityHeartbeatTimeout)
	case c.IdentityAllocationMode != "" && c.IdentityAllocationMode != modeCRD && c.IdentityAllocationMode != modeKVStore:
		return fmt.Errorf("--identity-allocation-mode: %q is not %q or %q", c.IdentityAllocationMode, modeCRD, modeKVStore)
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
	K8sCaches    k8s.CacheSync        `optional:"true"`
	Clientset    k8s.Clientset        `optional:"true"`
	CIDs         k8s.CiliumIdentities `optional:"true"`
	CEPs         k8s.CiliumEndpoints  `optional:"true"`
	StateDir     statedir.Dir         `optional:"true"`
	Lifecycle    cell.Lifecycle
	Jobs         job.Group
	Log          *slog.Logger
}

// newManagerCell builds the allocator; in kvstore mode the start hook
// creates the kvstore allocator, its references suffixed with the
// node's address, and starts its jobs (watch, reference repair, GC).
func newManagerCell(p managerParams) (*identitycache.Manager, error) {
	local := p.LocalNode.Get()
	cluster := local.Cluster
	mode, err := allocationMode(p.Config.IdentityAllocationMode, p.KVStore.Enabled(), p.Clientset != nil && p.Clientset.IsEnabled())
	if err != nil {
		return nil, err
	}
	m := identitycache.NewWithMode(cluster, p.Filter, mode, p.Observers)
	var crdSynced func()
	if mode == identitycache.CRD {
		if p.CIDs == nil || p.CEPs == nil || p.K8sCaches == nil {
			return nil, fmt.Errorf("--identity-allocation-mode=crd: the Kubernetes client cell is missing")
		}
		crdSynced = p.K8sCaches.Register(p.CIDs.Name())
	}
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
		if mode == identitycache.CRD {
			startCRD(p, m, crdSynced)
			return nil
		}
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
	return m, nil
}

func newMetricsOut(m *Metrics, mgr *identitycache.Manager) metrics.GroupOut {
	return metrics.NewGroupOut(m, countCollector{m: mgr, desc: m.Identities})
}
