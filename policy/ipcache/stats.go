package ipcache

import "github.com/apiary-net/apiary/kvstore/store"

// Stats are the figures of the cache that its status line shows.
type Stats struct {
	// Entries is the number of entries, Revision the applied revision.
	Entries  int
	Revision Revision
	// Failed is the number of prefixes waiting for an identity.
	Failed int
	// KVStore is the kvstore side; nil without a kvstore.
	KVStore *KVStats
}

// KVStats are the kvstore side of Stats.
type KVStats struct {
	// Published is the number of local endpoints published.
	Published int
	// Malformed and Refused count the skipped entries of the cluster
	// (undecodable, or of another cluster); Last names the last one and
	// why.
	Malformed, Refused int
	Last               string
	// Conflicts are the local entries another writer deleted or
	// changed, which the store wrote again.
	Conflicts []store.Conflict
	// WatchSynced: the cluster's entries were listed once; WriteSynced:
	// every local endpoint is written.
	WatchSynced, WriteSynced bool
}

// Stats returns the cache's figures now.
func (c *Cache) Stats() Stats {
	st := Stats{Entries: c.Len(), Revision: c.Revision(), Failed: c.failedCount()}
	if c.kv != nil {
		kv := c.kv.stats()
		st.KVStore = &KVStats{
			Published: kv.published, Malformed: kv.malformed, Refused: kv.refused, Last: kv.last, Conflicts: kv.conflicts,
			WatchSynced: kv.watchSynced, WriteSynced: kv.writeSynced,
		}
	}
	return st
}
