package node

import (
	"cmp"
	"container/heap"
	"slices"
)

// compareIdentities orders nodes by cluster, then name.
func compareIdentities(a, b Identity) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Name, b.Name))
}

// NodesAfter implements Manager: it keeps only the limit+1 smallest
// identities after `after` while it scans, and clones only the nodes it
// returns.
func (m *NodeManager) NodesAfter(after Identity, limit int) ([]Node, bool) {
	if limit <= 0 {
		return nil, false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	h := &maxIdentityHeap{}
	for id := range m.nodes {
		switch {
		case compareIdentities(id, after) <= 0:
		case len(*h) <= limit:
			heap.Push(h, id)
		case compareIdentities(id, (*h)[0]) < 0:
			(*h)[0] = id
			heap.Fix(h, 0)
		}
	}
	ids := []Identity(*h)
	slices.SortFunc(ids, compareIdentities)
	more := len(ids) > limit
	if more {
		ids = ids[:limit]
	}
	out := make([]Node, 0, len(ids))
	for _, id := range ids {
		out = append(out, m.nodes[id].Clone())
	}
	return out, more
}

// maxIdentityHeap is a heap of node identities with the largest on top.
type maxIdentityHeap []Identity

func (h maxIdentityHeap) Len() int           { return len(h) }
func (h maxIdentityHeap) Less(i, j int) bool { return compareIdentities(h[i], h[j]) > 0 }
func (h maxIdentityHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxIdentityHeap) Push(x any)        { *h = append(*h, x.(Identity)) }
func (h *maxIdentityHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
