package clustermesh

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// Params are what the mesh needs.
type Params struct {
	Config Config
	// Local is this cluster.
	Local      cluster.Info
	Nodes      node.Manager
	IPCache    ipcache.IPCache
	Identities identitycache.RemoteIdentities
	// Controllers runs the remote-etcd-<cluster> controllers.
	Controllers controller.Manager
	Log         *slog.Logger
	Metrics     *store.Metrics
	// Remote are the timings of the remote connections.
	Remote remote.Options
	// OnChange is called when the first scan of the config directory
	// ends and when a cluster's state changes (metrics, status line).
	OnChange func()
}

// ClusterMesh keeps one remote.Cluster per valid config file.
type ClusterMesh struct {
	p       Params
	claims  *idClaims
	watcher *dirWatcher
	svcs    *service.Cache

	mu       sync.Mutex
	clusters map[string]*remote.Cluster
	refused  map[string]error
	first    chan struct{} // closed after the first scan
}

// New returns the mesh; Run watches the config directory.
func New(p Params) *ClusterMesh {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	cm := &ClusterMesh{p: p, claims: newIDClaims(), clusters: map[string]*remote.Cluster{},
		refused: map[string]error{}, first: make(chan struct{}), svcs: service.NewCache()}
	cm.watcher = newDirWatcher(p.Config.ClusterMeshConfig, p.Local.ClusterName, p.Log, cm)
	return cm
}

// Enabled reports whether --clustermesh-config is set.
func (cm *ClusterMesh) Enabled() bool { return cm.p.Config.ClusterMeshConfig != "" }

// Run watches the config directory until ctx ends. The connections stay
// (and keep what they learned) until the controllers stop.
func (cm *ClusterMesh) Run(ctx context.Context) error {
	return cm.watcher.run(ctx)
}

// upsert implements dirHandler: a new file connects, a changed one
// restarts the connection.
func (cm *ClusterMesh) upsert(f clusterFile) {
	cm.mu.Lock()
	c, ok := cm.clusters[f.name]
	if !ok {
		c = remote.New(remote.Params{
			Name: f.name, Local: cm.p.Local, Nodes: cm.p.Nodes, IPCache: cm.p.IPCache, Identities: cm.p.Identities,
			Services: cm.svcs, Controllers: cm.p.Controllers, Claims: cm.claims, Log: cm.p.Log, Metrics: cm.p.Metrics,
			OnChange: cm.onChange, Options: cm.p.Remote,
		})
		cm.clusters[f.name] = c
	}
	cm.mu.Unlock()
	c.Connect(f.path, f.cfg)
	cm.onChange()
}

// remove implements dirHandler: disconnect and withdraw everything.
func (cm *ClusterMesh) remove(name string) {
	cm.mu.Lock()
	c, ok := cm.clusters[name]
	delete(cm.clusters, name)
	cm.mu.Unlock()
	if !ok {
		return
	}
	if err := c.Remove(); err != nil {
		cm.p.Log.Warn("Unable to stop the remote cluster connection cleanly", "cluster", name, "error", err)
	}
	cm.onChange()
}

// invalid implements dirHandler; it ends every scan, the first one
// included.
func (cm *ClusterMesh) invalid(refused map[string]error) {
	cm.mu.Lock()
	cm.refused = refused
	first := cm.first
	cm.mu.Unlock()
	for name, err := range refused {
		cm.p.Log.Warn("Refusing a clustermesh config file", "file", name, "error", err)
	}
	select {
	case <-first:
	default:
		close(first)
		cm.onChange() // the mesh's clusters are known now
	}
}

// FirstScanDone reports whether the config directory has been read once
// (its clusters are known, connected or not).
func (cm *ClusterMesh) FirstScanDone() bool {
	select {
	case <-cm.first:
		return true
	default:
		return false
	}
}

func (cm *ClusterMesh) onChange() {
	if cm.p.OnChange != nil {
		cm.p.OnChange()
	}
}

// Services is the global service cache the remotes feed.
func (cm *ClusterMesh) Services() *service.Cache { return cm.svcs }

// Clusters returns the remote clusters, sorted by name.
func (cm *ClusterMesh) Clusters() []*remote.Cluster {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	out := make([]*remote.Cluster, 0, len(cm.clusters))
	for _, c := range cm.clusters {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *remote.Cluster) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// Status returns the state of the mesh (GET /v1/cluster/mesh).
func (cm *ClusterMesh) Status() models.ClusterMesh {
	out := models.ClusterMesh{
		LocalCluster: cm.p.Local.ClusterName, LocalClusterID: cm.p.Local.ClusterID,
		ConfigDir: cm.p.Config.ClusterMeshConfig, Clusters: []models.RemoteCluster{},
		GlobalServices: cm.svcs.Len(),
	}
	for _, c := range cm.Clusters() {
		out.Clusters = append(out.Clusters, c.Status())
	}
	cm.mu.Lock()
	for name, err := range cm.refused {
		out.Invalid = append(out.Invalid, models.InvalidClusterConfig{File: name, Error: err.Error()})
	}
	cm.mu.Unlock()
	slices.SortFunc(out.Invalid, func(a, b models.InvalidClusterConfig) int { return strings.Compare(a.File, b.File) })
	return out
}

// ErrSyncTimeout is returned by WaitForRemotesSynced when
// --clustermesh-sync-timeout passed first.
var ErrSyncTimeout = errors.New("remote clusters not synced within --clustermesh-sync-timeout")

// WaitForRemotesSynced waits until every remote cluster configured when
// the directory was first read has listed every prefix once, or
// --clustermesh-sync-timeout passes (then it logs once which clusters
// were not ready and returns ErrSyncTimeout: callers carry on). The
// first endpoint regeneration calls it.
func (cm *ClusterMesh) WaitForRemotesSynced(ctx context.Context) error {
	if !cm.Enabled() {
		return nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, cm.p.Config.ClusterMeshSyncTimeout, ErrSyncTimeout)
	defer cancel()
	select {
	case <-cm.first:
	case <-ctx.Done():
		return cm.syncTimedOut(ctx)
	}
	for _, c := range cm.Clusters() {
		if err := c.WaitSynced(ctx); err != nil && !errors.Is(err, remote.ErrRemoved) {
			return cm.syncTimedOut(ctx)
		}
	}
	return nil
}

func (cm *ClusterMesh) syncTimedOut(ctx context.Context) error {
	err := context.Cause(ctx)
	if !errors.Is(err, ErrSyncTimeout) {
		return err
	}
	var waiting []string
	for _, c := range cm.Clusters() {
		if !c.Ready() {
			waiting = append(waiting, c.Name()+" ("+c.Status().Status+")")
		}
	}
	cm.p.Log.Warn("Carrying on without every remote cluster synced", "timeout", cm.p.Config.ClusterMeshSyncTimeout,
		"not-ready", strings.Join(waiting, ", "))
	return fmt.Errorf("%w: %s", ErrSyncTimeout, strings.Join(waiting, ", "))
}
