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

// entry returns the block's entry, its members and slots in the block.
func (b *smallServiceBlock) entry() *serviceEntry {
	b.s.members, b.s.slots = b.members[:0], b.slots[:0]
	return &b.s
}

func (b *serviceBlock8) entry() *serviceEntry {
	b.s.members, b.s.slots = b.members[:0], b.slots[:0]
	return &b.s
}

func (b *serviceBlock12) entry() *serviceEntry {
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
	case n <= block8:
		s = new(serviceBlock8).entry()
	case n <= block12:
		s = new(serviceBlock12).entry()
	case n <= largeBlock:
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
	var small, b8, b12, large int
	for _, n := range ns {
		switch {
		case n <= smallBlock:
			small++
		case n <= block8:
			b8++
		case n <= block12:
			b12++
		case n <= largeBlock:
			large++
		}
	}
	sb.small, sb.b8, sb.b12 = make([]smallServiceBlock, small), make([]serviceBlock8, b8), make([]serviceBlock12, b12)
	sb.large = make([]largeServiceBlock, large)
}

// next returns an entry for frontend fe with room for n backends.
func (sb *serviceBlocks) next(fe datapath.L3n4Addr, n int) *serviceEntry {
	var s *serviceEntry
	switch {
	case n <= smallBlock && len(sb.small) > 0:
		s, sb.small = sb.small[0].entry(), sb.small[1:]
	case n > smallBlock && n <= block8 && len(sb.b8) > 0:
		s, sb.b8 = sb.b8[0].entry(), sb.b8[1:]
	case n > block8 && n <= block12 && len(sb.b12) > 0:
		s, sb.b12 = sb.b12[0].entry(), sb.b12[1:]
	case n > block12 && n <= largeBlock && len(sb.large) > 0:
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
