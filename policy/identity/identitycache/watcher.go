package identitycache

import (
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/source"
)

// WatcherParams configure a ClusterWatcher.
type WatcherParams struct {
	// Cluster is the cluster whose identities are watched: every id must
	// be of its range, labels naming a cluster must name it.
	Cluster cluster.Info
	// Source says whose identities these are: source.KVStore for this
	// cluster's (the allocator's cache observes them), source.ClusterMesh
	// for a remote cluster's (the remote identity cache does).
	Source source.Source
	// Observer gets the changes, as *MasterKey keys.
	Observer store.BatchObserver
	// WatchParams are the watch store's scope (default "identities" for
	// source.KVStore, "<cluster>/identities" for the others), prefix
	// (default layout.IdentitiesIDPrefix; a KVStoreMesh cache serves
	// cilium/cache/identities/v1/<cluster>/id), logger, metrics and
	// options.
	store.WatchParams

	// remote, set by the remote cache, makes the watcher keep remote
	// identities compact (remoteLabels).
	remote *remoteLabels
}

// ClusterWatcher mirrors the master keys of a cluster's identities
// (layout.IdentityKey(id) => labels) from a backend into its
// observer: this cluster's into the kvstore allocator's cache, a remote
// cluster's into the remote identity cache; the same decoding and checks
// for both. Watch may run again on another backend (a reconnect):
// identities that vanished meanwhile are withdrawn once the new list is
// complete. Ids outside the cluster's range and labels naming another
// cluster are refused, names that are no id and values that are no label
// list are malformed: both are skipped and counted by its watch store.
type ClusterWatcher struct {
	*store.PrefixWatcher[*MasterKey]
	p WatcherParams
}

var _ allocator.MasterWatcher = (*ClusterWatcher)(nil)

// NewClusterWatcher returns a watcher; Watch runs it.
func NewClusterWatcher(p WatcherParams) *ClusterWatcher {
	if p.Scope == "" {
		p.Scope = "identities" // this cluster's, as the allocator's scope
		if p.Source != source.KVStore {
			p.Scope = p.Cluster.ClusterName + "/identities"
		}
	}
	w := &ClusterWatcher{p: p}
	w.PrefixWatcher = store.NewPrefixWatcher(layout.IdentitiesIDPrefix, &w.p.WatchParams, w.decode, p.Observer)
	return w
}

// decode is the watcher's Decoder: name is the id below the prefix,
// checked as the allocator's cache checks it (allocator.CheckMaster).
func (w *ClusterWatcher) decode(name string, value []byte) (*MasterKey, error) {
	id, err := allocator.CheckMaster(name, value)
	if err != nil {
		return nil, err
	}
	v := string(value)
	ident, err := DecodeKVStoreIdentity(w.p.Cluster, uint64(id), v)
	if err != nil {
		return nil, err
	}
	if r := w.p.remote; r != nil {
		// A remote identity keeps neither the value nor labels that
		// point into it: the remote cache indexes the labels by hash.
		sum := r.sum(kvstoreKeyOf(ident.Labels, v))
		r.intern(ident.Labels)
		return &MasterKey{name: name, labelsSum: sum, Identity: ident}, nil
	}
	return &MasterKey{name: name, value: v, Identity: ident}, nil
}

// MasterKey is a decoded master key: the identity, with the key's value
// as written (a remote identity's: the hash of its labels' canonical
// list instead, see remoteLabels).
type MasterKey struct {
	name      string
	value     string
	labelsSum uint64
	// Identity is the decoded identity.
	Identity *identity.Identity
}

var _ allocator.MasterKey[*identity.Identity] = (*MasterKey)(nil)

// GetKeyName returns the id as the key names it.
func (k *MasterKey) GetKeyName() string { return k.name }

// Master returns what the allocator's cache keeps of the key: the id, the
// allocator key (the value as written) and the identity.
func (k *MasterKey) Master() (allocator.ID, string, *identity.Identity) {
	return allocator.ID(k.Identity.ID), k.value, k.Identity
}
