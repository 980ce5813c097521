// Package store keeps collections of keys under one kvstore prefix in sync
// between agents, on top of kvstore.Backend:
//
//   - WatchStore (reader): mirrors a prefix into an observer; restartable
//     (after a reconnect, keys that vanished meanwhile are deleted once the
//     new list is done); Drain removes everything when a remote cluster goes
//     away. Entries its KeyFactory refuses are skipped, never fatal: counted
//     per kind (ErrMalformed, ErrRefused), logged (rate limited) and listed
//     for the owner's status line (SkipStats, Skipped).
//   - SyncStore (writer): writes this agent's keys through a coalescing
//     queue, in batches (one etcd transaction per batch, per-key order
//     kept, a refused batch retried key by key), with retries, and the sync
//     canary layout.SyncedKey(cluster, prefix) once the initial set is
//     written. It defends its keys: another writer's delete or change is
//     written over (seen by a watch, or compared on the periodic sync),
//     with backoff, and reported as a Conflict.
//   - SharedStore: local keys owned by this agent and shared keys from
//     others under one prefix, local keys re-written periodically and
//     re-created at once when someone deletes them.
//   - WatchStoreManager: starts a prefix's watcher once its canary exists
//     ("sync" mode) or all at once ("immediate" mode).
//   - PrefixWatcher: a WatchStore over one prefix of a cluster with a
//     typed Decoder (Prefix, Watch, Drain, Store), the shape of the node,
//     ipcache, identity and service cluster watchers, local or remote;
//     ObserverOf adapts typed functions to Observer, WriteAndWatchJobs
//     runs an agent's writer and watcher of one prefix.
//
// Values are decoded by a per-prefix KeyFactory.
//
// It may import packages of cells and kvstore, nothing of policy, datapath
// or clustermesh (docs/design.md, Layers).
package store
