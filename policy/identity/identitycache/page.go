package identitycache

import (
	"cmp"
	"container/heap"
	"slices"

	"github.com/apiary-net/apiary/policy/identity"
)

// IdentitiesAfter returns, sorted by id, at most limit known identities
// with ids above after, and whether more follow. Each source gives only
// its limit+1 smallest ids above after, so a page costs memory for a
// page, not for every identity.
func (m *Manager) IdentitiesAfter(after identity.NumericIdentity, limit int) ([]*identity.Identity, bool) {
	if limit <= 0 {
		return nil, false
	}
	var out []*identity.Identity
	for _, id := range identity.ReservedIdentities() {
		if id.ID > after {
			out = append(out, id)
		}
	}
	if m.kv != nil {
		out = append(out, m.kv.after(after, limit+1)...)
	} else {
		out = append(out, m.standalone.after(after, limit+1)...)
	}
	out = append(out, m.remote.after(after, limit+1)...)
	out = append(out, m.local.after(after, limit+1)...)
	slices.SortFunc(out, func(a, b *identity.Identity) int { return cmp.Compare(a.ID, b.ID) })
	if len(out) > limit {
		return out[:limit], true
	}
	return out, false
}

func (g *kvstoreGlobal) after(after identity.NumericIdentity, n int) []*identity.Identity {
	g.mu.RLock()
	defer g.mu.RUnlock()
	return smallestAfter(g.known, after, n, func(k *knownIdentity) *identity.Identity { return k.identity })
}

func (m *memAllocator) after(after identity.NumericIdentity, n int) []*identity.Identity {
	m.mu.Lock()
	defer m.mu.Unlock()
	return smallestAfter(m.byID, after, n, func(e *memEntry) *identity.Identity { return e.identity })
}

func (r *remoteCache) after(after identity.NumericIdentity, n int) []*identity.Identity {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return smallestAfter(r.byID, after, n, func(id *identity.Identity) *identity.Identity { return id })
}

// smallestAfter returns the identities of the at most n smallest ids of
// byID above after, in no particular order, keeping no more than n at
// any time.
func smallestAfter[V any](byID map[identity.NumericIdentity]V, after identity.NumericIdentity, n int,
	get func(V) *identity.Identity) []*identity.Identity {
	h := &maxIDHeap{}
	for id, v := range byID {
		switch {
		case id <= after:
		case len(*h) < n:
			heap.Push(h, get(v))
		case id < (*h)[0].ID:
			(*h)[0] = get(v)
			heap.Fix(h, 0)
		}
	}
	return *h
}

// maxIDHeap is a heap of identities with the largest id on top.
type maxIDHeap []*identity.Identity

func (h maxIDHeap) Len() int           { return len(h) }
func (h maxIDHeap) Less(i, j int) bool { return h[i].ID > h[j].ID }
func (h maxIDHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxIDHeap) Push(x any)        { *h = append(*h, x.(*identity.Identity)) }
func (h *maxIDHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
