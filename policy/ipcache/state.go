package ipcache

import "net/netip"

// prefixState is what the cache holds of one prefix: what its owners
// say and the entry resolved from that (nil until the worker resolved
// it, and when nothing gives the prefix an identity). One map of these
// costs a prefix one map slot, not one in a map of contributions and
// another in a map of entries.
//
// Most prefixes have one owner that gives an identity outright (a
// kvstore entry, a local endpoint): once its entry is committed, the
// entry says all that owner said, so the state keeps only the owner and
// the entry (compact), not a second copy of the metadata. Whatever reads
// or changes the contributions expands them first.
type prefixState struct {
	meta  prefixMeta
	entry *Entry
	// only is, in a compact state, the resource of its one owner (whose
	// source is the entry's, and whose metadata is what the entry says,
	// mdOf); meta is then nil. It is empty otherwise: no resource is.
	only ResourceID
}

// compact reports whether the state keeps its one owner in only.
func (st prefixState) compact() bool { return st.only != "" }

// contributions returns the contributions of the prefix; those of a
// compact state are made from its entry.
func (st prefixState) contributions() prefixMeta {
	if !st.compact() {
		return st.meta
	}
	return prefixMeta{{owner: owner{source: st.entry.Source, resource: st.only}, md: mdOf(st.entry)}}
}

// expanded returns st with its contributions in meta, ready to change.
func (st prefixState) expanded() prefixState {
	if st.compact() {
		st.meta, st.only = st.contributions(), ""
	}
	return st
}

// mdOf returns the metadata one owner gave for the prefix to have entry
// e: the fields merge copies from a lone contribution with an identity.
func mdOf(e *Entry) Metadata {
	return Metadata{Identity: e.Identity, TunnelPeer: e.TunnelPeer, EncryptKey: e.EncryptKey,
		K8sNamespace: e.K8sNamespace, K8sPodName: e.K8sPodName, K8sServiceAccount: e.K8sServiceAccount, NamedPorts: e.NamedPorts}
}

// setStateLocked stores st as the state of p, or forgets p when st holds
// nothing.
func (c *Cache) setStateLocked(p netip.Prefix, st prefixState) {
	if len(st.meta) == 0 && !st.compact() && st.entry == nil {
		delete(c.prefixes, p)
		return
	}
	c.prefixes[p] = st
}

// entryLocked returns the entry of p, nil if it has none.
func (c *Cache) entryLocked(p netip.Prefix) *Entry { return c.prefixes[p].entry }

// compactLocked makes the state of p compact when its one contribution
// gives an identity outright, has no labels, and its committed entry is
// what it says (nothing changed it since the worker took it): made
// again from the entry, the contribution merges to the same entry.
func (c *Cache) compactLocked(p netip.Prefix) {
	st := c.prefixes[p]
	if st.compact() || len(st.meta) != 1 || st.entry == nil {
		return
	}
	if _, dirty := c.dirtyRev[p]; dirty {
		return
	}
	md := &st.meta[0].md
	if md.Identity == 0 || len(md.Labels) > 0 {
		return
	}
	m, ok := st.meta.merge()
	m.entry.Prefix = p
	if !ok || !sameEntry(&m.entry, st.entry) || m.entry.K8sServiceAccount != st.entry.K8sServiceAccount {
		return
	}
	c.prefixes[p] = prefixState{entry: st.entry, only: st.meta[0].owner.resource}
}
