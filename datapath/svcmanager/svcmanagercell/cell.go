package svcmanagercell

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// Cell provides the service manager, reads --lb-state-file, runs the
// initial reconcile and the retries of failed writes, and adds the
// "Services" status line and the apiary_services_* metrics.
var Cell = cell.Module("service-manager", "Services to load-balancing frontends in the datapath",
	cell.Config(DefaultConfig),
	cell.Provide(newManager, newStatusProvider, newMetricsOut, func(f *fileSource) StateFile { return f }),
	cell.ProvidePrivate(newFileSource, func() *waiting { return &waiting{} }, newHealthServer, newProxyHealth),
	cell.Invoke(start, startHealthServer, startProxyHealth),
)

// Config is the service manager's configuration.
type Config struct {
	// LBStateFile is a file of Kubernetes Services and EndpointSlices to
	// balance (Cilium's --lb-state-file), for agents without Kubernetes.
	LBStateFile string
	// EnableHealthCheckNodePort answers the health-check NodePorts of
	// LoadBalancer Services with externalTrafficPolicy Local (Cilium's
	// flag).
	EnableHealthCheckNodePort bool
	// EnableSvcSourceRangeCheck enforces loadBalancerSourceRanges in
	// the datapath (Cilium's --enable-svc-source-range-check); off when
	// the cloud load balancer enforces them and the clients' addresses
	// do not reach the node (a load balancer that translates them).
	EnableSvcSourceRangeCheck bool
	// EnableExternalIPs balances the Services' spec.externalIPs
	// (Cilium's --enable-external-ips); off, they get no frontend.
	EnableExternalIPs bool
	// KubeProxyReplacementHealthzBindAddress is where kube-proxy's own
	// health check (/healthz, /livez; kube-proxy's :10256) is answered
	// (Cilium's flag; empty: not answered).
	KubeProxyReplacementHealthzBindAddress string
}

// DefaultConfig reads no state file, answers health-check NodePorts,
// enforces source ranges and balances external IPs, as Cilium's
// defaults with kube-proxy replacement.
var DefaultConfig = Config{EnableHealthCheckNodePort: true, EnableSvcSourceRangeCheck: true, EnableExternalIPs: true}

// Flags registers --lb-state-file, --enable-health-check-nodeport,
// --enable-svc-source-range-check, --enable-external-ips and
// --kube-proxy-replacement-healthz-bind-address.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("lb-state-file", def.LBStateFile,
		"Synchronize load-balancing state from this file of Kubernetes Services and EndpointSlices (\"services:\", \"endpoints:\"; .yaml, .yml or .json); replace it atomically (rename) to change it, empty it to remove everything")
	fs.Bool("enable-health-check-nodeport", def.EnableHealthCheckNodePort,
		"Answer the spec.healthCheckNodePort of LoadBalancer Services with externalTrafficPolicy Local on every node address (200 with local ready endpoints, else 503), as kube-proxy does")
	fs.Bool("enable-svc-source-range-check", def.EnableSvcSourceRangeCheck,
		"Enforce the loadBalancerSourceRanges of LoadBalancer Services for clients from outside the cluster (turn off when the cloud load balancer enforces them and translates the clients' addresses)")
	fs.Bool("enable-external-ips", def.EnableExternalIPs,
		"Balance the spec.externalIPs of Services (off: they get no frontend, as a mitigation of CVE-2020-8554 where any Service may claim any address)")
	fs.String("kube-proxy-replacement-healthz-bind-address", def.KubeProxyReplacementHealthzBindAddress,
		"Address (IP:port, such as 0.0.0.0:10256) to answer kube-proxy's health check on (/healthz, /livez), which cloud load balancers probe; empty: not answered")
}

// Validate checks the file's format is known and the health check's
// address.
func (c *Config) Validate() error {
	if err := checkBindAddress(c.KubeProxyReplacementHealthzBindAddress); err != nil {
		return err
	}
	switch filepath.Ext(c.LBStateFile) {
	case ".yaml", ".yml", ".json":
		return nil
	}
	if c.LBStateFile == "" {
		return nil
	}
	return fmt.Errorf("--lb-state-file %q: the name must end in .yaml, .yml or .json", c.LBStateFile)
}

// retryInterval is how often failed writes are written again.
const retryInterval = 10 * time.Second

type managerParams struct {
	cell.In

	Config    Config
	Writer    datapath.LBMapWriter   `optional:"true"`
	NodePorts datapath.NodePortAddrs `optional:"true"`
	Node      localnode.Store
	Log       *slog.Logger
}

func newManager(p managerParams) *svcmanager.Manager {
	m := svcmanager.New(p.Writer, nodeOf(p.Node.Get(), p.NodePorts), p.Log)
	m.SetSourceRangeCheck(p.Config.EnableSvcSourceRangeCheck)
	m.SetExternalIPs(p.Config.EnableExternalIPs)
	return m
}

// nodeOf is the manager's view of the local node: its NodePort
// addresses are its own and, with NodePort programs (nodePorts not
// nil), its devices' (--devices, --nodeport-addresses).
func nodeOf(n localnode.LocalNode, nodePorts datapath.NodePortAddrs) svcmanager.Node {
	out := svcmanager.Node{Name: n.Name, Zone: n.Zone}
	if n.IP.IsValid() {
		out.Addrs = append(out.Addrs, n.IP)
	}
	if n.SecondaryIP.IsValid() {
		out.Addrs = append(out.Addrs, n.SecondaryIP)
	}
	if nodePorts != nil {
		out.Addrs = nodePorts.Addrs(out.Addrs)
	}
	return out
}

// waiting is what the initial reconcile waits for ("" when not
// waiting), for the status line.
type waiting struct {
	mu   sync.Mutex
	what string
}

func (w *waiting) set(what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.what = what
}

func (w *waiting) get() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.what
}

type startParams struct {
	cell.In

	Manager   *svcmanager.Manager
	File      *fileSource
	Waiting   *waiting
	Node      localnode.Store
	NodePorts datapath.NodePortAddrs `optional:"true"`
	Remotes   datapath.RemoteSync    `optional:"true"`
	K8sCaches k8s.CacheSync          `optional:"true"`
	Status    status.Refresher       `optional:"true"`
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Log       *slog.Logger
}

// start follows the local node and its NodePort addresses, adds the
// state file's watcher, the initial reconcile and the retry of failed
// writes.
func start(p startParams) {
	var unsubscribe []func()
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			unsubscribe = append(unsubscribe, p.Node.Subscribe(func(n localnode.LocalNode) { p.Manager.SetNode(nodeOf(n, p.NodePorts)) }))
			if p.NodePorts != nil {
				unsubscribe = append(unsubscribe, p.NodePorts.Subscribe(func() { p.Manager.SetNode(nodeOf(p.Node.Get(), p.NodePorts)) }))
			}
			p.Manager.SetNode(nodeOf(p.Node.Get(), p.NodePorts))
			return nil
		},
		OnStop: func(cell.HookContext) error {
			for _, u := range unsubscribe {
				u()
			}
			return nil
		},
	})
	if p.File.enabled() {
		p.Jobs.Add(p.File.trigger, job.OneShot("lb-state-file-watch", p.File.watch))
	}
	p.Jobs.Add(job.OneShot("lb-reconcile", func(ctx context.Context, health cell.Health) error {
		err := waitSources(ctx, p, func(what string) {
			p.Waiting.set(what)
			health.OK("waiting for " + what)
			refresh(p.Status)
		})
		p.Waiting.set("")
		if err != nil {
			return err
		}
		if err := p.Manager.Reconcile(); err != nil {
			return err
		}
		health.OK("reconciled")
		refresh(p.Status)
		return nil
	}, job.WithRetry(-1, job.Backoff{Min: time.Second, Max: time.Minute})))
	p.Jobs.Add(job.Timer("lb-retry", func(context.Context) error {
		if !p.Manager.NeedsRetry() {
			return nil
		}
		err := p.Manager.RetryFailed()
		refresh(p.Status)
		return err
	}, retryInterval))
}

// waitSources waits for the initial state of every source: the state
// file read once, the Kubernetes caches, the remote clusters.
func waitSources(ctx context.Context, p startParams, waitFor func(string)) error {
	if p.File.enabled() {
		waitFor("the first read of --lb-state-file")
		select {
		case <-p.File.loaded:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if p.K8sCaches != nil {
		// Returns at the latest when --k8s-sync-timeout passed.
		waitFor("the Kubernetes caches' sync (apiary status --verbose: Kubernetes)")
		if err := p.K8sCaches.WaitForCacheSync(ctx); err != nil {
			return err
		}
	}
	if p.Remotes != nil {
		waitFor("the remote clusters' sync (apiary clustermesh status)")
		if err := p.Remotes.WaitForRemotesSynced(ctx); err != nil {
			if ctx.Err() != nil {
				return err
			}
			p.Log.Warn("Reconciling the load-balancing maps without every remote cluster synced", "error", err)
		}
	}
	return nil
}

func refresh(r status.Refresher) {
	if r != nil {
		r.Refresh()
	}
}
