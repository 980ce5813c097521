// Package store keeps collections of keys under one kvstore prefix in sync
// between agents, on top of kvstore.Backend:
//
//   - WatchStore (reader): mirrors a prefix into an observer; restartable
//     (after a reconnect, keys that vanished meanwhile are deleted once the
//     new list is done); Drain removes everything when a remote cluster goes
//     away.
//   - SyncStore (writer): writes this agent's keys through a coalescing
//     queue with retries, and the sync canary cilium/synced/<cluster>/<prefix>
//     once the initial set is written.
//   - SharedStore: local keys owned by this agent and shared keys from
//     others under one prefix, local keys re-written periodically and
//     re-created at once when someone deletes them.
//   - WatchStoreManager: starts a prefix's watcher once its canary exists
//     ("sync" mode) or all at once ("immediate" mode).
//
// Values are decoded by a per-prefix KeyFactory.
package store
