package ipcache

import (
	"fmt"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/source"
)

// WatcherParams configure a ClusterWatcher.
type WatcherParams struct {
	// IPCache gets the entries.
	IPCache IPCache
	// Cluster is the cluster whose entries are watched: every global
	// identity must be of its range.
	Cluster cluster.Info
	// Source tags the entries: source.KVStore for this cluster's,
	// source.ClusterMesh for a remote cluster's.
	Source source.Source
	// SkipHost, if valid, is this node's IP: entries with it as host IP
	// are this node's own and left to the local source.
	SkipHost netip.Addr
	// WatchParams are the watch store's scope, prefix (default
	// layout.IPDefaultPrefix; a KVStoreMesh cache serves
	// cilium/cache/ip/v1/<cluster>), logger, metrics, writer (this
	// agent's SyncStore under the prefix, if any) and options.
	store.WatchParams
}

// ClusterWatcher mirrors a cluster's ipcache entries
// (layout.IPDefaultPrefix) from a backend into the ipcache. Watch
// may run again on another backend (a reconnect): entries that vanished
// meanwhile are withdrawn once the new list is complete. Malformed
// entries and entries whose identity is not of the cluster's range
// (ErrForeignIdentity) are skipped, counted and listed by its watch
// store.
type ClusterWatcher struct {
	*store.PrefixWatcher[*IPIdentityPair]
	p      WatcherParams
	intern *Interner
}

// NewClusterWatcher returns a watcher; Watch runs it. Its watch store
// keeps only the names of the entries (store.WithNamesOnly): what an
// entry says lives in the ipcache's metadata, and a removed entry is
// found again by its name, the prefix.
func NewClusterWatcher(p WatcherParams) *ClusterWatcher {
	p.Options = append(slices.Clip(p.Options), store.WithNamesOnly())
	w := &ClusterWatcher{p: p, intern: NewInterner()}
	w.PrefixWatcher = store.NewPrefixWatcher(layout.IPDefaultPrefix, &w.p.WatchParams, w.decode, w)
	return w
}

// decode is the watcher's Decoder.
func (w *ClusterWatcher) decode(name string, value []byte) (*IPIdentityPair, error) {
	p, err := DecodeIPIdentityPair(name, value)
	if err == nil {
		err = checkIdentity(w.p.Cluster, p.ID)
	}
	return p, err
}

// checkIdentity refuses identities that mean nothing in the cluster:
// global identities of another cluster's range, and node-local ones.
func checkIdentity(cluster cluster.Info, id identity.NumericIdentity) error {
	switch {
	case id.IsReserved() || id < identity.MinAllocationIdentity:
		return nil
	case id.Scope() != identity.ScopeGlobal:
		return fmt.Errorf("field ID: %w: %d is a %s identity", ErrForeignIdentity, id, id.ScopeName())
	case identity.ClusterIDOf(cluster, id) != cluster.ClusterID:
		return fmt.Errorf("field ID: %w: %d belongs to cluster id %d, this is %q with cluster id %d",
			ErrForeignIdentity, id, identity.ClusterIDOf(cluster, id), cluster.ClusterName, cluster.ClusterID)
	}
	return nil
}

// resource names an entry's metadata: "kvstore/<ip>" for this cluster's,
// "clustermesh/<cluster>/<ip>" for a remote's.
func (w *ClusterWatcher) resource(name string) ResourceID {
	if w.p.Source == source.KVStore {
		return kvstoreResource(name)
	}
	return ResourceID(string(w.p.Source) + "/" + w.p.Cluster.ClusterName + "/" + name)
}

// OnUpdate puts an entry in the cache; entries of this node are left to
// the local source.
func (w *ClusterWatcher) OnUpdate(key store.Key) { w.apply([]store.Change{{Key: key}}) }

// OnDelete withdraws an entry that vanished from the kvstore.
func (w *ClusterWatcher) OnDelete(key store.Key) { w.apply([]store.Change{{Key: key, Deleted: true}}) }

// OnChanges applies a batch of the watch store's changes with one
// ipcache Apply: one lock and one round of the ipcache's worker for a
// page of a list, not one per entry.
func (w *ClusterWatcher) OnChanges(changes []store.Change) { w.apply(changes) }

var _ store.BatchObserver = (*ClusterWatcher)(nil)

func (w *ClusterWatcher) apply(changes []store.Change) {
	updates := make([]Update, len(changes))
	for i, c := range changes {
		updates[i] = w.update(c)
	}
	if _, err := w.p.IPCache.Apply(updates...); err == nil || len(updates) == 1 {
		w.logApplyError(changes[0], err)
		return
	}
	// Apply changes nothing when one update is refused: apply them one
	// by one, so that the others land and each refusal is logged.
	for i, u := range updates {
		_, err := w.p.IPCache.Apply(u)
		w.logApplyError(changes[i], err)
	}
}

// update is the ipcache update of a change: entries of this node are
// withdrawn from this source, as they are the local source's. A removed
// entry comes as its name (the store keeps no more of it).
func (w *ClusterWatcher) update(c store.Change) Update {
	name := c.Key.GetKeyName()
	u := Update{Source: w.p.Source, Resource: w.resource(name)}
	if c.Deleted {
		u.Prefix, _ = ParsePrefixOrIP(name) // the name of a decoded entry
		u.Remove = true
		return u
	}
	p := c.Key.(*IPIdentityPair)
	u.Prefix, _ = p.Prefix() // checked by decode
	host, _ := p.HostAddr()
	switch {
	case w.p.SkipHost.IsValid() && host == w.p.SkipHost:
		w.p.Log.Debug("Ignoring this node's own kvstore entry", "key", w.Prefix()+"/"+p.GetKeyName())
		u.Remove = true
	default:
		u.Metadata = Metadata{
			Identity: p.ID, TunnelPeer: host, EncryptKey: p.Key,
			K8sNamespace: w.intern.String(p.K8sNamespace), K8sPodName: p.K8sPodName,
			K8sServiceAccount: w.intern.String(p.K8sServiceAccount), NamedPorts: w.intern.NamedPorts(p.NamedPorts),
		}
	}
	return u
}

func (w *ClusterWatcher) logApplyError(c store.Change, err error) {
	if err == nil {
		return
	}
	msg := "Unable to apply a kvstore entry"
	if c.Deleted {
		msg = "Unable to withdraw a kvstore entry"
	}
	w.p.Log.Warn(msg, "scope", w.p.Scope, "key", w.Prefix()+"/"+c.Key.GetKeyName(), "error", err)
}
