package store

import (
	"cmp"
	"log/slog"
)

// WatchParams are the watch-store settings every watcher of a kvstore
// prefix takes (the node, ipcache, identity and service cluster
// watchers, local or remote).
type WatchParams struct {
	// Scope names the watch store in logs and metrics ("nodes",
	// "cluster2/ipcache").
	Scope string
	// Prefix, if set, overrides the watcher's default prefix (a
	// KVStoreMesh cache serves cilium/cache/... instead of
	// cilium/state/...).
	Prefix  string
	Log     *slog.Logger
	Metrics *Metrics
	// Writer, if set, is the SyncStore writing this agent's own keys
	// under the prefix; it sees every event to defend its keys.
	Writer *SyncStore
	// Options are further options of the watch store (WithOnSync).
	Options []WatchStoreOption
}

// NewWatchStore returns a watch store with these settings; a nil Log
// becomes a discarding logger (and is set in p).
func (p *WatchParams) NewWatchStore(factory KeyFactory, observer Observer) *WatchStore {
	if p.Log == nil {
		p.Log = slog.New(slog.DiscardHandler)
	}
	opts := []WatchStoreOption{WithLogger(p.Log), WithMetrics(p.Metrics)}
	if p.Writer != nil {
		opts = append(opts, WithWriter(p.Writer))
	}
	return NewWatchStore(p.Scope, factory, observer, append(opts, p.Options...)...)
}

// prefixOr returns the prefix to watch: p.Prefix, or def when unset.
func (p *WatchParams) prefixOr(def string) string { return cmp.Or(p.Prefix, def) }
