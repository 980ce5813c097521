package lbmap

// backendTable holds the writer's backend records by id, in pages of
// idPageSize consecutive ids. Ids are handed out in order, so the
// records of an initial sync fill a few hundred pages one after the
// other, and a lookup costs a small map's lookup (the pages', mostly in
// cache) and one slot, where a map of 100,000 ids costs cache misses in
// its groups on every insert, lookup and delete.
//
// A page left empty stays until empty pages are more than half of them
// (and more than maxEmptyPages): a backend added and removed again at
// the edge of the ids in use would otherwise make and drop a page each
// time.
type backendTable struct {
	pages map[uint32]*idPage // by id >> idPageBits
	n     int
	empty int // pages with no record
}

const (
	idPageBits = 9
	idPageSize = 1 << idPageBits
	// maxEmptyPages is how many empty pages stay in any case.
	maxEmptyPages = 8
)

type idPage struct {
	bes [idPageSize]*backend
	n   int
}

// get returns the record of id, nil if there is none.
func (t *backendTable) get(id uint32) *backend {
	if p := t.pages[id>>idPageBits]; p != nil {
		return p.bes[id&(idPageSize-1)]
	}
	return nil
}

// set makes be the record of id, which has none.
func (t *backendTable) set(id uint32, be *backend) {
	if t.pages == nil {
		t.pages = map[uint32]*idPage{}
	}
	p := t.pages[id>>idPageBits]
	fresh := p == nil
	if fresh {
		p = new(idPage)
		t.pages[id>>idPageBits] = p
	}
	slot := &p.bes[id&(idPageSize-1)]
	// A new page's slots are nil: not read (a read of its fresh memory
	// maps the zero page, and the write then faults again).
	if fresh || *slot == nil {
		if p.n == 0 && t.empty > 0 {
			t.empty--
		}
		p.n++
		t.n++
	}
	*slot = be
}

// del removes the record of id.
func (t *backendTable) del(id uint32) {
	p := t.pages[id>>idPageBits]
	if p == nil || p.bes[id&(idPageSize-1)] == nil {
		return
	}
	p.bes[id&(idPageSize-1)] = nil
	p.n--
	t.n--
	if p.n > 0 {
		return
	}
	t.empty++
	if t.empty > maxEmptyPages && t.empty > len(t.pages)/2 {
		for k, p := range t.pages {
			if p.n == 0 {
				delete(t.pages, k)
			}
		}
		t.empty = 0
	}
}

// len returns the number of records.
func (t *backendTable) len() int { return t.n }

// all yields every record, in no particular order.
func (t *backendTable) all(yield func(*backend) bool) {
	for _, p := range t.pages {
		for _, be := range p.bes {
			if be != nil && !yield(be) {
				return
			}
		}
	}
}
