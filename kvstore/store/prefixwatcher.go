package store

import (
	"context"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/kvstore"
)

// Decoder decodes and checks the value stored at name (the key below the
// watched prefix). Its errors wrap ErrMalformed or ErrRefused so that
// the watch store counts the skipped entry by kind.
type Decoder[K Key] func(name string, value []byte) (K, error)

// PrefixWatcher mirrors one kvstore prefix of a cluster into an observer
// through a WatchStore, each value decoded into a K. It is the shape the
// cluster watchers share (nodes, ipcache entries, identities, global
// services), for this cluster's entries (source kvstore) and a remote
// cluster's (source clustermesh) alike; each kind keeps its decoder, its
// checks and its observer. Watch may run again on another backend (a
// reconnect): entries that vanished meanwhile are withdrawn once the new
// list is complete.
type PrefixWatcher[K Key] struct {
	prefix string
	watch  *WatchStore
}

// Watcher is a PrefixWatcher of any key type: what a remote cluster's
// connection runs, drains and reports for each of its prefixes.
type Watcher interface {
	Prefix() string
	Watch(ctx context.Context, backend kvstore.Backend)
	Drain()
	Store() *WatchStore
}

var _ Watcher = (*PrefixWatcher[*KVPair])(nil)

// NewPrefixWatcher returns a watcher of p.Prefix, or of defaultPrefix
// when p sets none, with the watch store of p (a nil p.Log becomes a
// discarding logger); Watch runs it.
func NewPrefixWatcher[K Key](defaultPrefix string, p *WatchParams, decode Decoder[K], observer Observer) *PrefixWatcher[K] {
	factory := KeyFactoryFunc(func(name string, value []byte) (Key, error) {
		k, err := decode(name, value)
		if err != nil {
			return nil, err // not a K holding nil: the store skips the entry
		}
		return k, nil
	})
	return &PrefixWatcher[K]{prefix: p.prefixOr(defaultPrefix), watch: p.NewWatchStore(factory, observer)}
}

// Prefix is the watched prefix.
func (w *PrefixWatcher[K]) Prefix() string { return w.prefix }

// Watch lists and watches the prefix on backend until ctx ends.
func (w *PrefixWatcher[K]) Watch(ctx context.Context, backend kvstore.Backend) {
	w.watch.Watch(ctx, backend, w.prefix)
}

// Drain withdraws every entry learned (a remote cluster removed).
func (w *PrefixWatcher[K]) Drain() { w.watch.Drain() }

// Store is the watch store: entry counts, sync state, skipped entries.
func (w *PrefixWatcher[K]) Store() *WatchStore { return w.watch }

// ObserverOf adapts functions of the watcher's key type to Observer;
// nil functions are skipped.
type ObserverOf[K Key] struct {
	Update func(K)
	Delete func(K)
}

// OnUpdate calls Update with k as a K.
func (o ObserverOf[K]) OnUpdate(k Key) {
	if o.Update != nil {
		o.Update(k.(K))
	}
}

// OnDelete calls Delete with k as a K.
func (o ObserverOf[K]) OnDelete(k Key) {
	if o.Delete != nil {
		o.Delete(k.(K))
	}
}

// WriteAndWatchJobs are the jobs of an agent that writes its own keys
// under a prefix of its cluster and mirrors the others' from the same
// prefix: writer (named writerName) waits for the initial set to be
// written (the sync canary) and then runs the SyncStore's queue;
// "kvstore-watch" runs w on backend.
func WriteAndWatchJobs(writerName string, writer *SyncStore, w Watcher, backend kvstore.Backend) []job.Job {
	return []job.Job{
		job.OneShot(writerName, func(ctx context.Context, _ cell.Health) error {
			writer.Synced(ctx)
			writer.Run(ctx)
			return nil
		}),
		job.OneShot("kvstore-watch", func(ctx context.Context, _ cell.Health) error {
			w.Watch(ctx, backend)
			return nil
		}),
	}
}
