package ipcache

import (
	"net/netip"
	"slices"
	"sort"
)

// indexBlock is the most prefixes one block of a prefixIndex holds.
const indexBlock = 512

// prefixIndex keeps prefixes sorted (ComparePrefixes) in blocks of at most
// indexBlock, so that adding or removing one moves at most a block (and,
// on a split or merge, the block list), and the prefixes after a given
// one are found by binary search. The cache keeps one beside its entry
// map so that lists can be served a page at a time in order, without
// sorting or copying the table.
type prefixIndex struct {
	blocks [][]netip.Prefix
	n      int
}

// blockFor returns the index of the block p belongs in: the last block
// whose first prefix is not after p (0 when p precedes them all).
func (x *prefixIndex) blockFor(p netip.Prefix) int {
	i := sort.Search(len(x.blocks), func(i int) bool { return ComparePrefixes(x.blocks[i][0], p) > 0 })
	return max(i-1, 0)
}

// insert adds p; a prefix already there is left alone. A full block is
// split before the insert, so blocks never grow past indexBlock. Past the
// end of the last block (prefixes that arrive in order) a new block is
// started instead, so that those blocks stay full. Blocks grow as slices
// do and the halves of a split are copied to fit, so that the index
// takes about the room of its prefixes however they arrive (a kvstore
// list brings them in the order of their key strings, not in prefix
// order, which leaves many blocks half full).
func (x *prefixIndex) insert(p netip.Prefix) {
	if len(x.blocks) == 0 {
		x.blocks = [][]netip.Prefix{newBlock(p)}
		x.n = 1
		return
	}
	bi := x.blockFor(p)
	b := x.blocks[bi]
	i, found := slices.BinarySearchFunc(b, p, ComparePrefixes)
	if found {
		return
	}
	x.n++
	if len(b) < indexBlock {
		x.blocks[bi] = slices.Insert(b, i, p)
		return
	}
	if bi == len(x.blocks)-1 && i == len(b) {
		x.blocks = append(x.blocks, newBlock(p))
		return
	}
	half := len(b) / 2
	right, left := slices.Clone(b[half:]), slices.Clone(b[:half])
	if i <= half {
		left = slices.Insert(left, i, p)
	} else {
		right = slices.Insert(right, i-half, p)
	}
	x.blocks[bi] = left
	x.blocks = slices.Insert(x.blocks, bi+1, right)
}

// newBlock returns a block holding p.
func newBlock(p netip.Prefix) []netip.Prefix { return []netip.Prefix{p} }

// remove deletes p if it is there. A block left under a quarter full is
// merged into a neighbour when they fit in one block.
func (x *prefixIndex) remove(p netip.Prefix) {
	if len(x.blocks) == 0 {
		return
	}
	bi := x.blockFor(p)
	b := x.blocks[bi]
	i, found := slices.BinarySearchFunc(b, p, ComparePrefixes)
	if !found {
		return
	}
	b = slices.Delete(b, i, i+1)
	x.n--
	x.blocks[bi] = b
	switch {
	case len(b) == 0:
		x.blocks = slices.Delete(x.blocks, bi, bi+1)
	case len(b) < indexBlock/4:
		x.mergeSmall(bi)
	}
}

// mergeSmall merges block bi into its left or right neighbour when the
// two fit in one block.
func (x *prefixIndex) mergeSmall(bi int) {
	switch {
	case bi > 0 && len(x.blocks[bi-1])+len(x.blocks[bi]) <= indexBlock:
		x.blocks[bi-1] = append(x.blocks[bi-1], x.blocks[bi]...)
		x.blocks = slices.Delete(x.blocks, bi, bi+1)
	case bi+1 < len(x.blocks) && len(x.blocks[bi])+len(x.blocks[bi+1]) <= indexBlock:
		x.blocks[bi] = append(x.blocks[bi], x.blocks[bi+1]...)
		x.blocks = slices.Delete(x.blocks, bi+1, bi+2)
	}
}

// ascend calls fn for every prefix from `from` on (after it when
// inclusive is false; from the first when from is not valid), in order,
// until fn returns false.
func (x *prefixIndex) ascend(from netip.Prefix, inclusive bool, fn func(netip.Prefix) bool) {
	bi, i := 0, 0
	if from.IsValid() && len(x.blocks) > 0 {
		bi = x.blockFor(from)
		var found bool
		i, found = slices.BinarySearchFunc(x.blocks[bi], from, ComparePrefixes)
		if found && !inclusive {
			i++
		}
	}
	for ; bi < len(x.blocks); bi, i = bi+1, 0 {
		for _, p := range x.blocks[bi][i:] {
			if !fn(p) {
				return
			}
		}
	}
}

// len returns the number of prefixes.
func (x *prefixIndex) len() int { return x.n }
