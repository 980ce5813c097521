package policycell

import (
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// Cell is the policy engine of the agent: the Repository and the
// selector cache (an identity observer), the policy sources (--policy-dir
// and PUT/GET/DELETE /v1/policy), CIDR identities for the prefixes the
// rules mention, debounced endpoint regeneration requests
// (RegenerationRequests), POST /v1/policy/trace and the "Policy" status
// line; with ipcache.Cell, the ipcache's named ports are the peer named
// ports egress rules resolve against. With the state dir cell, the
// policies imported through the API are kept in
// <state-dir>/policy/api.json and restored at start. It needs the identity cell (and the cluster name of the local-node cell).
var Cell = cell.Module("policy", "Policy engine: repository, selector cache, policy sources, trace",
	cell.Config(policyapi.DefaultConfig),
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newImporterCell),
	cell.Provide(
		newSelectorCache,
		func(l *importer) *policy.Repository { return l.repo },
		func(l *importer) policy.RegenerationRequests { return l.regen },
		newStatusProvider,
		newPutHandler,
		newGetHandler,
		newDeleteHandler,
		newTraceHandler,
		newObjects,
		newPeerPortsListener,
	),
	// The sources load policies even when nothing asks for the
	// repository yet (no endpoint manager, no API server).
	cell.Invoke(func(*importer) {}),
	cell.Invoke(useIPCacheForCIDRs),
)

// Config configures the policy sources. (The policy maps' size,
// --bpf-policy-map-max, is the loader cell's: trace takes it as a
// policy.MapStateLimit.)
type Config struct {
	// PolicyDir is a directory of policy files (YAML or JSON, any number
	// of documents of any kind); it is watched, and each file's rules are
	// replaced when it changes. Empty: no directory.
	PolicyDir string
	// EnablePolicy is Cilium's --enable-policy: default (a direction is
	// enforced where a rule selects the endpoint), always (every
	// endpoint in default deny both ways) or never (nothing enforced).
	EnablePolicy string
	// PolicyAuditMode is Cilium's --policy-audit-mode: policy verdicts
	// are computed and reported, but denied flows pass.
	PolicyAuditMode bool
}

// DefaultConfig loads no directory and enforces as Kubernetes defines.
var DefaultConfig = Config{EnablePolicy: string(policy.EnforceDefault)}

// Flags registers --policy-dir, --enable-policy and --policy-audit-mode.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("policy-dir", def.PolicyDir,
		"Directory of policy files (YAML/JSON, multi-document) to load and watch")
	fs.String("enable-policy", def.EnablePolicy,
		"When endpoints enforce policy: default (where a rule selects them), always (every endpoint, both directions) or never")
	fs.Bool("policy-audit-mode", def.PolicyAuditMode,
		"Report policy verdicts (apiary monitor) but let denied flows through: to try a policy before enforcing it")
}

// Validate refuses an unknown --enable-policy.
func (c *Config) Validate() error {
	m, err := policy.ParseEnforcementMode(c.EnablePolicy)
	c.EnablePolicy = string(m)
	return err
}

// cacheOut provides the selector cache and registers it as an identity
// observer.
type cacheOut struct {
	cell.Out

	Cache    *selectorcache.Cache
	Observer identity.Observer `group:"identity-observers"`
}

func newSelectorCache() cacheOut {
	c := selectorcache.New()
	return cacheOut{Cache: c, Observer: c}
}

type importerParams struct {
	cell.In

	Config      Config
	APIConfig   policyapi.Config
	ClusterInfo cluster.Info
	Cache       *selectorcache.Cache
	Allocator   identity.Allocator
	// StateDir keeps the API-imported policies across restarts; without
	// it (a test hive) they last as long as the agent.
	StateDir  statedir.Dir `optional:"true"`
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Log       *slog.Logger
	// Status refreshes the Policy line after each change.
	Status status.Refresher `optional:"true"`
}

// newImporterCell builds the repository and its sources; the start hooks
// restore the API-imported policies kept in the state dir, then load
// --policy-dir once and start watching it.
func newImporterCell(p importerParams) *importer {
	opts := policyapi.NewOptions(p.ClusterInfo.ClusterName, p.APIConfig)
	repo := policy.NewRepository(p.Cache)
	repo.SetEnforcementMode(policy.EnforcementMode(p.Config.EnablePolicy))
	repo.SetAuditMode(p.Config.PolicyAuditMode)
	l := newImporter(repo, p.Allocator, opts, p.Log)
	l.status = p.Status
	p.Jobs.Add(l.regen.trigger)
	p.Lifecycle.Append(cell.Hook{OnStop: func(ctx cell.HookContext) error { return l.releaseAll(ctx) }})
	if p.StateDir != nil {
		// Before --policy-dir's load and before the endpoint manager's
		// hooks: no endpoint regenerates without the policies.
		l.store = newAPIStore(p.StateDir.Path(), p.Log)
		p.Lifecycle.Append(cell.Hook{OnStart: func(ctx cell.HookContext) error { return l.restoreAPI(ctx) }})
	}
	if p.Config.PolicyDir != "" {
		w := newDirWatcher(p.Config.PolicyDir, l)
		p.Lifecycle.Append(cell.Hook{OnStart: w.start})
		p.Jobs.Add(w.rescan, job.OneShot("policy-dir-watch", w.run))
	}
	return l
}
