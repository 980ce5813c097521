package ipcache

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/clustermesh/types"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/source"
)

// KVStorePrefix is where the agents of a cluster share their ipcache
// entries: Cilium's cilium/state/ip/v1 with the default address space.
const KVStorePrefix = "cilium/state/ip/v1/default"

// KVStoreSyncedKey names the sync canary of the ipcache entries,
// cilium/synced/<cluster>/cilium/state/ip/v1: Cilium's readers
// (agents, KVStoreMesh) wait for it there, not below the address space.
const KVStoreSyncedKey = "cilium/state/ip/v1"

// ErrForeignIdentity marks a kvstore entry whose identity is not valid in
// this cluster (allocated by another cluster, or node-local); the watch
// store skips it as refused.
var ErrForeignIdentity = store.KindError(store.ErrRefused, "identity not valid in this cluster")

// kvSync publishes this node's endpoints through a SyncStore and mirrors
// the cluster's entries (other nodes') into the cache with source kvstore.
// The watch store hands its events to the SyncStore, which writes a local
// entry again when another writer deletes or changes it.
type kvSync struct {
	c      *Cache
	client kvstore.Client
	log    *slog.Logger
	sync   *store.SyncStore
	watch  *store.WatchStore

	mu        sync.Mutex
	published map[string]struct{}
}

func newKVSync(c *Cache, client kvstore.Client, cluster types.ClusterInfo, log *slog.Logger, m *store.Metrics,
	periodicSync time.Duration) *kvSync {
	k := &kvSync{c: c, client: client, log: log, published: map[string]struct{}{}}
	k.sync = store.NewSyncStore(cluster.ClusterName, client, KVStorePrefix, store.WithSyncedKey(KVStoreSyncedKey),
		store.WithSyncLogger(log), store.WithSyncMetrics(m), store.WithPeriodicSync(periodicSync))
	k.watch = store.NewWatchStore("ipcache", store.KeyFactoryFunc(k.decode), k,
		store.WithLogger(log), store.WithMetrics(m), store.WithWriter(k.sync),
		store.WithOnSync(func(context.Context) { c.markInitialSync() }))
	return k
}

// jobs are the writer and the watcher.
func (k *kvSync) jobs() []job.Job {
	return []job.Job{
		job.OneShot("kvstore-publish", func(ctx context.Context, _ cell.Health) error {
			k.sync.Synced(ctx)
			k.sync.Run(ctx)
			return nil
		}),
		job.OneShot("kvstore-watch", func(ctx context.Context, _ cell.Health) error {
			k.watch.Watch(ctx, k.client, KVStorePrefix)
			return nil
		}),
	}
}

// decode is the watcher's KeyFactory: malformed values and entries of
// other clusters (ErrForeignIdentity) are skipped, counted and listed by
// the watch store.
func (k *kvSync) decode(name string, value []byte) (store.Key, error) {
	p, err := DecodeIPIdentityPair(name, value)
	if err == nil {
		err = checkIdentity(k.c.cluster, p.ID)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// checkIdentity refuses identities that mean nothing in this cluster:
// global identities of another cluster's range, and node-local ones.
func checkIdentity(cluster types.ClusterInfo, id identity.NumericIdentity) error {
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

// OnUpdate puts another node's entry in the cache; entries whose host IP
// is this node's are this node's own and are left to the local source.
func (k *kvSync) OnUpdate(key store.Key) {
	p := key.(*IPIdentityPair)
	prefix, _ := p.Prefix() // checked by decode
	host, _ := p.HostAddr()
	res := kvstoreResource(p.GetKeyName())
	var err error
	if host.IsValid() && host == k.c.local.IP {
		k.log.Debug("Ignoring this node's own kvstore entry", "key", KVStorePrefix+"/"+p.GetKeyName())
		_, err = k.c.RemoveMetadata(prefix, source.KVStore, res)
	} else {
		_, err = k.c.UpsertMetadata(prefix, source.KVStore, res, Metadata{
			Identity: p.ID, TunnelPeer: host, EncryptKey: p.Key,
			K8sNamespace: p.K8sNamespace, K8sPodName: p.K8sPodName, K8sServiceAccount: p.K8sServiceAccount,
			NamedPorts: p.NamedPorts,
		})
	}
	if err != nil {
		k.log.Warn("Unable to apply a kvstore entry", "key", KVStorePrefix+"/"+p.GetKeyName(), "error", err)
	}
}

// OnDelete withdraws an entry that vanished from the kvstore.
func (k *kvSync) OnDelete(key store.Key) {
	p := key.(*IPIdentityPair)
	prefix, _ := p.Prefix()
	if _, err := k.c.RemoveMetadata(prefix, source.KVStore, kvstoreResource(p.GetKeyName())); err != nil {
		k.log.Warn("Unable to withdraw a kvstore entry", "key", KVStorePrefix+"/"+p.GetKeyName(), "error", err)
	}
}

func kvstoreResource(name string) ResourceID { return ResourceID("kvstore/" + name) }

// publish queues the write of a local entry.
func (k *kvSync) publish(p *IPIdentityPair) {
	if err := k.sync.UpsertKey(context.Background(), p); err != nil {
		k.log.Warn("Unable to publish a local ipcache entry", "key", KVStorePrefix+"/"+p.GetKeyName(), "error", err)
		return
	}
	k.mu.Lock()
	k.published[p.GetKeyName()] = struct{}{}
	k.mu.Unlock()
}

// unpublish queues the deletion of a local entry.
func (k *kvSync) unpublish(p *IPIdentityPair) {
	k.sync.DeleteKey(context.Background(), p)
	k.mu.Lock()
	delete(k.published, p.GetKeyName())
	k.mu.Unlock()
}

// kvStats is what the status line says about the kvstore side.
type kvStats struct {
	published, malformed, refused int
	last                          string // the last skipped key and why
	conflicts                     []store.Conflict
	watchSynced, writeSynced      bool
}

func (k *kvSync) stats() kvStats {
	skipped := k.watch.SkipStats()
	st := kvStats{
		malformed: skipped.Malformed, refused: skipped.Refused,
		conflicts:   k.sync.Conflicts(),
		watchSynced: k.watch.Synced(), writeSynced: k.sync.IsSynced(),
	}
	if skipped.Total() > 0 {
		st.last = fmt.Sprintf("%s: %v", skipped.Last.Key, skipped.Last.Err)
	}
	k.mu.Lock()
	st.published = len(k.published)
	k.mu.Unlock()
	return st
}
