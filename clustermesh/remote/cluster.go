package remote

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Options are the timings of a remote connection; zero fields take the
// defaults.
type Options struct {
	// ConnectTimeout bounds the wait for the first answer of the etcd
	// (default 30s).
	ConnectTimeout time.Duration
	// ConfigTimeout bounds the wait for the remote's cluster
	// configuration, kvstore/layout's ClusterConfigKey (default 30s).
	ConfigTimeout time.Duration
	// StatusInterval is the etcd client's probe interval (default 5s).
	StatusInterval time.Duration
	// HeartbeatTimeout fails the connection when the remote's heartbeat
	// is older (default 2m; negative disables the check).
	HeartbeatTimeout time.Duration
	// WatchdogFailures is how many failed status probes in a row restart
	// the connection (default 3).
	WatchdogFailures int
	// RetryBase is the first wait after a failed attempt (default 1s).
	RetryBase time.Duration
}

func (o *Options) setDefaults() {
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = 30 * time.Second
	}
	if o.ConfigTimeout <= 0 {
		o.ConfigTimeout = 30 * time.Second
	}
	if o.StatusInterval <= 0 {
		o.StatusInterval = 5 * time.Second
	}
	if o.HeartbeatTimeout == 0 {
		o.HeartbeatTimeout = 2 * kvstore.HeartbeatInterval
	}
	if o.WatchdogFailures <= 0 {
		o.WatchdogFailures = 3
	}
	if o.RetryBase <= 0 {
		o.RetryBase = time.Second
	}
}

// IDClaims keeps the cluster ids of the connected remotes so that two
// remotes cannot use the same id.
type IDClaims interface {
	// Claim takes id for cluster; it fails, naming the holder, when
	// another cluster holds it (and remembers the conflict for both).
	Claim(cluster string, id uint32) error
	// Release gives back what cluster holds.
	Release(cluster string)
	// Conflicts lists the other clusters that tried to use cluster's id
	// or hold the id cluster wants.
	Conflicts(cluster string) []string
}

// Params are what a remote cluster needs.
type Params struct {
	// Name is the remote cluster's name.
	Name string
	// Local is this cluster.
	Local cluster.Info
	// Nodes, IPCache and Identities get what the remote holds.
	Nodes      node.Manager
	IPCache    ipcache.IPCache
	Identities identitycache.RemoteIdentities
	// Services gets the remote's shared services (a private cache when
	// nil).
	Services *service.Cache
	// Controllers runs remote-etcd-<name>.
	Controllers controller.Manager
	// Claims refuses duplicate cluster ids.
	Claims  IDClaims
	Log     *slog.Logger
	Metrics *store.Metrics
	// OnChange is called (without locks held) when readiness changes.
	OnChange func()
	Options  Options
}

// Cluster is one remote cluster.
type Cluster struct {
	p    Params
	name string // controller name

	mu         sync.Mutex
	etcdConfig *kvstore.EtcdConfig
	configFile string
	conn       *connection // nil while disconnected
	watchers   *watchers   // survive reconnects; nil before the first
	clusterID  uint32      // the id the watchers were built for
	state      state
	isRemoved  bool

	synced  chan struct{} // closed when every prefix has synced once
	removed chan struct{} // closed by Remove
}

// state is what the status shows.
type state struct {
	status      string
	connected   bool
	config      configState
	failures    int
	lastFailure time.Time
	lastError   string
}

type configState struct {
	found bool
	cfg   cluster.CiliumClusterConfig
}

// ErrRemoved is returned by WaitSynced for a removed cluster.
var ErrRemoved = errors.New("remote cluster was removed")

// New returns a remote cluster; Connect starts it.
func New(p Params) *Cluster {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	p.Log = p.Log.With("remote-cluster", p.Name)
	p.Options.setDefaults()
	if p.Services == nil {
		p.Services = service.NewCache()
	}
	return &Cluster{p: p, name: "remote-etcd-" + p.Name, synced: make(chan struct{}), removed: make(chan struct{}),
		state: state{status: "waiting for the first connection attempt"}}
}

// Name is the remote cluster's name.
func (c *Cluster) Name() string { return c.p.Name }

// Connect (re)starts the connection with the configuration of file: an
// old connection is released first.
func (c *Cluster) Connect(file string, cfg *kvstore.EtcdConfig) {
	c.mu.Lock()
	c.etcdConfig, c.configFile = cfg, file
	c.mu.Unlock()
	c.p.Controllers.Update(c.name, controller.Params{
		DoFunc:                 c.connect,
		StopFunc:               func(context.Context) error { c.release(); return nil },
		ErrorRetryBaseDuration: c.p.Options.RetryBase,
		MaxRetryInterval:       time.Minute,
	})
}

// Remove disconnects and withdraws everything learned from the cluster
// (its config file was removed).
func (c *Cluster) Remove() error {
	c.mu.Lock()
	if !c.isRemoved {
		c.isRemoved = true
		close(c.removed)
	}
	c.mu.Unlock()
	err := c.p.Controllers.Remove(c.name) // runs StopFunc: release
	c.mu.Lock()
	w := c.watchers
	c.watchers = nil
	c.mu.Unlock()
	if w != nil {
		w.drain()
	}
	c.p.Claims.Release(c.p.Name)
	c.notify()
	return err
}

// WaitSynced waits until every prefix of the remote has been listed once;
// it returns ErrRemoved when the cluster is removed meanwhile.
func (c *Cluster) WaitSynced(ctx context.Context) error {
	select {
	case <-c.synced:
		return nil
	case <-c.removed:
		return ErrRemoved
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Ready reports whether every prefix of the current cluster id has been
// listed once.
func (c *Cluster) Ready() bool {
	c.mu.Lock()
	w := c.watchers
	c.mu.Unlock()
	return w != nil && w.allSynced()
}

func (c *Cluster) notify() {
	if c.p.OnChange != nil {
		c.p.OnChange()
	}
}
