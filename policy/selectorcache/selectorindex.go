package selectorcache

import "github.com/apiary-net/apiary/policy/labels"

// selectorIndex finds the selectors an identity may match without
// trying every selector: a selector with an In requirement is filed
// under that requirement's "key=value" index keys (an identity it
// selects carries one of them); the others are tried for every identity.
type selectorIndex struct {
	byLabel   map[string]map[*CachedSelector]struct{}
	unindexed map[*CachedSelector]struct{}
}

func newSelectorIndex() selectorIndex {
	return selectorIndex{
		byLabel:   make(map[string]map[*CachedSelector]struct{}),
		unindexed: make(map[*CachedSelector]struct{}),
	}
}

func (si selectorIndex) add(cs *CachedSelector) {
	if len(cs.indexKeys) == 0 {
		si.unindexed[cs] = struct{}{}
		return
	}
	for _, k := range cs.indexKeys {
		set, ok := si.byLabel[k]
		if !ok {
			set = make(map[*CachedSelector]struct{})
			si.byLabel[k] = set
		}
		set[cs] = struct{}{}
	}
}

func (si selectorIndex) remove(cs *CachedSelector) {
	delete(si.unindexed, cs)
	for _, k := range cs.indexKeys {
		delete(si.byLabel[k], cs)
		if len(si.byLabel[k]) == 0 {
			delete(si.byLabel, k)
		}
	}
}

// candidates calls fn once for each selector that may match an
// identity with labels ls. Labels have one value per key, so an
// identity meets at most one index key of a selector.
func (si selectorIndex) candidates(ls labels.Labels, fn func(*CachedSelector)) {
	for cs := range si.unindexed {
		fn(cs)
	}
	for _, l := range ls {
		for cs := range si.byLabel[indexKey(l.Key, l.Value)] {
			fn(cs)
		}
	}
}
