package lbmap

import "github.com/apiary-net/apiary/datapath"

// A frontend's entry, members and slots are read together on every
// upsert; with a few backends they share one allocation (a block), so
// that a change of a service no write touched for a while costs one
// cold stretch of memory, not three. Larger services have their own
// arrays.
const (
	smallBlock = 4
	largeBlock = 16
)

type smallServiceBlock struct {
	s       serviceEntry
	members [smallBlock]member
	slots   [smallBlock]uint32
}

type largeServiceBlock struct {
	s       serviceEntry
	members [largeBlock]member
	slots   [largeBlock]uint32
}

// entry returns the block's entry, its members and slots in the block.
func (b *smallServiceBlock) entry() *serviceEntry {
	b.s.members, b.s.slots = b.members[:0], b.slots[:0]
	return &b.s
}

func (b *largeServiceBlock) entry() *serviceEntry {
	b.s.members, b.s.slots = b.members[:0], b.slots[:0]
	return &b.s
}

// newServiceEntry returns an entry for frontend fe with room for n
// backends.
func newServiceEntry(fe datapath.L3n4Addr, n int) *serviceEntry {
	var s *serviceEntry
	switch {
	case n <= smallBlock:
		s = new(smallServiceBlock).entry()
	case n <= largeBlock:
		s = new(largeServiceBlock).entry()
	default:
		s = &serviceEntry{members: make([]member, 0, n), slots: make([]uint32, 0, n)}
	}
	s.frontend, s.key = fe, keyOf(fe)
	return s
}

// serviceBlocks hands out the entries of many frontends from one array
// per block size (createBulk).
type serviceBlocks struct {
	small []smallServiceBlock
	large []largeServiceBlock
}

// presize makes room for the frontends of ns backends.
func (sb *serviceBlocks) presize(ns []int) {
	var small, large int
	for _, n := range ns {
		switch {
		case n <= smallBlock:
			small++
		case n <= largeBlock:
			large++
		}
	}
	sb.small, sb.large = make([]smallServiceBlock, small), make([]largeServiceBlock, large)
}

// next returns an entry for frontend fe with room for n backends.
func (sb *serviceBlocks) next(fe datapath.L3n4Addr, n int) *serviceEntry {
	var s *serviceEntry
	switch {
	case n <= smallBlock && len(sb.small) > 0:
		s = sb.small[0].entry()
		sb.small = sb.small[1:]
	case n > smallBlock && n <= largeBlock && len(sb.large) > 0:
		s = sb.large[0].entry()
		sb.large = sb.large[1:]
	default:
		return newServiceEntry(fe, n)
	}
	s.frontend, s.key = fe, keyOf(fe)
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
