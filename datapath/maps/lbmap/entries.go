package lbmap

import "github.com/apiary-net/apiary/datapath"

// A frontend's entry, members and slots are read together on every
// upsert; with a few backends they share one allocation (a block), so
// that a change of a service no write touched for a while costs one
// cold stretch of memory, not three. Larger services have their own
// arrays.
const (
	smallBlock = 4
	block8     = 8
	block12    = 12
	largeBlock = 16
)

type smallServiceBlock struct {
	s       serviceEntry
	members [smallBlock]member
	slots   [smallBlock]uint32
}

type serviceBlock8 struct {
	s       serviceEntry
	members [block8]member
	slots   [block8]uint32
}

type serviceBlock12 struct {
	s       serviceEntry
	members [block12]member
	slots   [block12]uint32
}

type largeServiceBlock struct {
	s       serviceEntry
	members [largeBlock]member
	slots   [largeBlock]uint32
}

// blockClass is the block a frontend of n backends takes: 0-3, by
// size, or -1 for its own arrays.
func blockClass(n int) int {
	switch {
	case n <= smallBlock:
		return 0
	case n <= block8:
		return 1
	case n <= block12:
		return 2
	case n <= largeBlock:
		return 3
	}
	return -1
}

// use makes members and slots (a block's arrays) the room of s.
func (s *serviceEntry) use(members []member, slots []uint32) *serviceEntry {
	s.members, s.slots = members[:0], slots[:0]
	return s
}

// entry returns the block's entry, its members and slots in the block.
func (b *smallServiceBlock) entry() *serviceEntry { return b.s.use(b.members[:], b.slots[:]) }
func (b *serviceBlock8) entry() *serviceEntry     { return b.s.use(b.members[:], b.slots[:]) }
func (b *serviceBlock12) entry() *serviceEntry    { return b.s.use(b.members[:], b.slots[:]) }
func (b *largeServiceBlock) entry() *serviceEntry { return b.s.use(b.members[:], b.slots[:]) }

// newServiceEntry returns an entry for frontend fe with room for n
// backends.
func newServiceEntry(fe datapath.L3n4Addr, n int) *serviceEntry {
	var s *serviceEntry
	switch blockClass(n) {
	case 0:
		s = new(smallServiceBlock).entry()
	case 1:
		s = new(serviceBlock8).entry()
	case 2:
		s = new(serviceBlock12).entry()
	case 3:
		s = new(largeServiceBlock).entry()
	default:
		s = &serviceEntry{members: make([]member, 0, n), slots: make([]uint32, 0, n)}
	}
	s.key = keyOf(fe)
	return s
}

// serviceBlocks hands out the entries of many frontends from one array
// per block size (createBulk).
type serviceBlocks struct {
	small []smallServiceBlock
	b8    []serviceBlock8
	b12   []serviceBlock12
	large []largeServiceBlock
}

// presize makes room for the frontends of ns backends.
func (sb *serviceBlocks) presize(ns []int32) {
	var count [4]int
	for _, n := range ns {
		if c := blockClass(int(n)); c >= 0 {
			count[c]++
		}
	}
	sb.small, sb.b8 = make([]smallServiceBlock, count[0]), make([]serviceBlock8, count[1])
	sb.b12, sb.large = make([]serviceBlock12, count[2]), make([]largeServiceBlock, count[3])
}

// next returns an entry for frontend fe with room for n backends: from
// the arrays while they last, else newServiceEntry's.
func (sb *serviceBlocks) next(fe datapath.L3n4Addr, n int) *serviceEntry {
	var s *serviceEntry
	switch c := blockClass(n); {
	case c == 0 && len(sb.small) > 0:
		s, sb.small = sb.small[0].entry(), sb.small[1:]
	case c == 1 && len(sb.b8) > 0:
		s, sb.b8 = sb.b8[0].entry(), sb.b8[1:]
	case c == 2 && len(sb.b12) > 0:
		s, sb.b12 = sb.b12[0].entry(), sb.b12[1:]
	case c == 3 && len(sb.large) > 0:
		s, sb.large = sb.large[0].entry(), sb.large[1:]
	default:
		return newServiceEntry(fe, n)
	}
	s.key = keyOf(fe)
	return s
}

// keepMembers makes next s's members, in the room s has when it is
// enough (the scratch next is reused by the next upsert).
func (s *serviceEntry) keepMembers(next []member) {
	if cap(s.members) < len(next) {
		s.members = make([]member, 0, len(next)+len(next)/4)
	}
	s.members = append(s.members[:0], next...)
}
