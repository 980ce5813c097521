package store

import (
	"hash/maphash"
	"iter"
	"maps"
)

// watchEntry is what a WatchStore keeps of a key: the decoded key (nil
// in a store created WithNamesOnly, see keyOf) and a hash of the value,
// not the value: a value listed or written again is compared by its
// hash, so the raw value is not held for as long as the key lives. Bit
// 0 of sum marks the entry stale (not listed again yet); the hash has
// the other 63 bits.
type watchEntry struct {
	key Key
	sum uint64
}

// valueSum returns the hash of value as a watchEntry keeps it.
func valueSum(seed maphash.Seed, value []byte) uint64 { return maphash.Bytes(seed, value) &^ 1 }

func (e watchEntry) stale() bool               { return e.sum&1 == 1 }
func (e watchEntry) sameValue(sum uint64) bool { return e.sum&^1 == sum }

func (e watchEntry) withStale(stale bool) watchEntry {
	e.sum &^= 1
	if stale {
		e.sum |= 1
	}
	return e
}

// keyOf returns the key of the entry named name: the decoded key, or
// its NameKey in a store created WithNamesOnly (which keeps no key, so
// that the name is not held twice).
func (e watchEntry) keyOf(name string) Key {
	if e.key == nil {
		return NameKey(name)
	}
	return e.key
}

// entryTable holds a WatchStore's entries by name: whole in keys, or,
// in a store created WithNamesOnly, only their sums in sums, whose map
// slots are half the size.
type entryTable struct {
	keys map[string]watchEntry // nil with names only
	sums map[string]uint64
}

func newEntryTable(namesOnly bool) entryTable {
	if namesOnly {
		return entryTable{sums: map[string]uint64{}}
	}
	return entryTable{keys: map[string]watchEntry{}}
}

func (t *entryTable) get(name string) (watchEntry, bool) {
	if t.keys != nil {
		e, ok := t.keys[name]
		return e, ok
	}
	sum, ok := t.sums[name]
	return watchEntry{sum: sum}, ok
}

func (t *entryTable) set(name string, e watchEntry) {
	if t.keys != nil {
		t.keys[name] = e
		return
	}
	t.sums[name] = e.sum
}

func (t *entryTable) remove(name string) {
	delete(t.keys, name)
	delete(t.sums, name)
}

func (t *entryTable) len() int { return len(t.keys) + len(t.sums) }

func (t *entryTable) clear() {
	clear(t.keys)
	clear(t.sums)
}

// all iterates over the entries; set and remove may be called meanwhile.
func (t *entryTable) all() iter.Seq2[string, watchEntry] {
	if t.keys != nil {
		return maps.All(t.keys)
	}
	return func(yield func(string, watchEntry) bool) {
		for name, sum := range t.sums {
			if !yield(name, watchEntry{sum: sum}) {
				return
			}
		}
	}
}
