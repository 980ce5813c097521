package svcmanager

import (
	"hash/maphash"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Converter is FromKubernetes for a watcher: it keeps what it parsed of
// each Service and of the EndpointSlices it was last given with it, so
// that a change of one slice parses that slice only, not the Service and
// its other slices again (a service of 1,000 endpoints has ten slices or
// more). An object counts as seen when it is the same object (informers
// hand out one object per version and never change it) with the same
// non-empty resourceVersion; objects without one are parsed every time.
// What a change reads is kept in one record per Service: the parsed
// Service and its slices, found by the Service object itself. Not safe
// for concurrent use: the watcher that owns it calls it from its one
// goroutine.
//
// A change allocates nothing once a few changes were made: the manager
// gives the Service it replaces back (serviceRef), and the Converter
// keeps it and the room of its backends for the next changes, of any
// Service (a room parsed again gets a few spare places). So a Service
// from Convert, once upserted, belongs to the managers it was upserted
// into: do not read it, or hand it to another manager, after the next
// Convert. (One that went to an observer or to a second manager or
// source is never given back.)
type Converter struct {
	// slots keep what Convert keeps of each Service name.
	slots map[objectKey]*Slot
	// portNames are one-name lists shared by every backend of a port
	// of that name: one per port name the cluster uses.
	portNames map[string][]string
	// hints are the topology hints of endpoints, shared by the
	// endpoints hinted alike (hintsOf).
	hints map[string]*Hints
	seed  maphash.Seed // of the slice names' hashes
	// rooms are backend arrays and copies are Services that no Service
	// in use has any more, the last given back on top: a change makes
	// its backends and its Service in them, in memory the CPU most
	// likely still has in its caches (the previous change's), not in
	// its own record's spare memory, which it wrote long ago, nor in
	// new memory. last is the record of the last Convert: the manager
	// gives its replaced Service back by the next call.
	rooms  [][]Backend
	copies []*Service
	last   *convertedService
}

// maxKept bounds the rooms and Services a Converter keeps for the next
// changes: a change gives back one of each and takes one of each.
const maxKept = 8

type objectKey struct{ namespace, name string }

// convertedService is a Service as parsed (base: nil when not balanced)
// with the slices of the last Convert call; one is their room when
// there is one slice (the common case: no second allocation).
type convertedService struct {
	obj    *corev1.Service
	base   *Service // &svc, or nil
	svc    Service
	slices []convertedSlice
	one    [1]convertedSlice
	ref    serviceRef // of every Service made of this object
	// warnings counts svc's own warnings (the Service's, before any
	// slice's); handedOut: svc was returned (and the manager has not
	// given it back).
	warnings  int
	handedOut bool
	// feRoom holds svc's frontends when they are few: read with it.
	feRoom [2]Frontend
	// retired is the room of the slice version last replaced, which the
	// Service the manager holds may still use (reclaim).
	retired []Backend
}

type convertedSlice struct {
	name     string // obj's, read without reading obj
	hash     uint64 // of name: a change finds its slice without reading the old name
	obj      *discoveryv1.EndpointSlice
	backends []Backend // never changed while a Service has it
	// room is backends' array, to its capacity, when the record parsed
	// it (nil for a slice taken over from the version before, whose
	// Services may still be held elsewhere: never made again in).
	room     []Backend
	warnings []string
}

// NewConverter returns an empty converter.
func NewConverter() *Converter {
	return &Converter{slots: map[objectKey]*Slot{},
		portNames: map[string][]string{}, hints: map[string]*Hints{}, seed: maphash.MakeSeed()}
}

// Convert returns what FromKubernetes(svc, eps) returns, parsing only
// the objects it has not seen. eps are all the slices of svc: the
// converter keeps those and forgets the slices it had before that are
// not among them.
func (c *Converter) Convert(svc *corev1.Service, eps []*discoveryv1.EndpointSlice) *Service {
	if svc.ResourceVersion == "" {
		return c.ConvertIn(&Slot{}, svc, eps) // kept nowhere
	}
	k := objectKey{svc.Namespace, svc.Name}
	slot := c.slots[k]
	if slot == nil {
		slot = &Slot{}
		c.slots[k] = slot
	}
	return c.ConvertIn(slot, svc, eps)
}

// Slot holds what a Converter keeps of the Service of one name (and of
// its slices) for a caller that keeps a state per Service itself, such
// as the Kubernetes watcher: ConvertIn finds it there, without the
// Converter's lookups. The zero Slot is empty; a Slot is used for one
// name only, and set to the zero Slot when the Service is deleted (as
// ForgetService forgets).
type Slot struct{ rec *convertedService }

// Slices returns how many EndpointSlices the slot keeps.
func (s *Slot) Slices() int {
	if s.rec == nil {
		return 0
	}
	return len(s.rec.slices)
}

// ConvertIn is Convert with what the Converter keeps of svc's name in
// slot rather than in the Converter.
func (c *Converter) ConvertIn(slot *Slot, svc *corev1.Service, eps []*discoveryv1.EndpointSlice) *Service {
	c.reclaim(c.last)
	rec := slot.rec
	if rec == nil || rec.obj != svc || svc.ResourceVersion == "" {
		rec = newRecord(svc, slot.rec)
		if svc.ResourceVersion != "" {
			slot.rec = rec
		}
	}
	return c.convert(rec, eps)
}

// convert is Convert with rec, the record of the Service.
func (c *Converter) convert(rec *convertedService, eps []*discoveryv1.EndpointSlice) *Service {
	if rec.base == nil {
		return nil
	}
	c.reclaim(rec)
	c.last = rec
	s := c.out(rec)
	// The Service's own warnings, before any slice's (an append copies).
	baseWarnings := rec.svc.Warnings[:rec.warnings:rec.warnings]
	if len(eps) == 1 { // the common case: no copy of the backends
		p := c.slice(rec, eps[0])
		c.prune(rec, eps)
		s.Backends = p.backends // the slice's own: made again in only once given back
		s.Warnings = baseWarnings
		if len(p.warnings) > 0 {
			s.Warnings = append(baseWarnings, p.warnings...)
		}
		return s
	}
	n := 0
	parts := make([]convertedSlice, len(eps))
	for i, sl := range eps {
		parts[i] = c.slice(rec, sl)
		n += len(parts[i].backends)
	}
	c.prune(rec, eps)
	s.Backends = nil
	if n > 0 {
		s.Backends = make([]Backend, 0, n)
	}
	s.Warnings = baseWarnings
	for _, p := range parts {
		s.Backends = append(s.Backends, p.backends...)
		s.Warnings = append(s.Warnings, p.warnings...)
	}
	if len(s.Warnings) == 0 {
		s.Warnings = nil
	}
	return s
}

// out returns the Service a Convert of rec returns: the record's own the
// first time (nobody has it yet: an initial sync allocates no copy),
// then a copy of it, since a Service handed out never changes while it
// is held: in one given back, when there is one. The copies share the
// record's frontends, warnings and source ranges, parsed once per
// object version and never changed.
func (c *Converter) out(rec *convertedService) *Service {
	if !rec.handedOut {
		rec.handedOut = true
		return &rec.svc
	}
	if n := len(c.copies); n > 0 {
		s := c.copies[n-1]
		c.copies[n-1] = nil
		c.copies = c.copies[:n-1]
		*s = rec.svc
		return s
	}
	s := rec.svc
	return &s
}

// reclaim takes the Service the manager gave back of rec (nil: none), if
// it did: nobody holds it, nor its backends when they were rec's retired
// room (a Service whose backends a kept slice still has leaves them
// there). Both are kept for the next changes.
func (c *Converter) reclaim(rec *convertedService) {
	if rec == nil {
		return
	}
	old := rec.ref.returned.Swap(nil)
	if old == nil {
		return
	}
	if old == &rec.svc {
		rec.handedOut = false
	} else {
		c.copies = push(c.copies, old)
	}
	if len(old.Backends) > 0 && len(rec.retired) > 0 && &old.Backends[0] == &rec.retired[0] {
		c.rooms = push(c.rooms, rec.retired[:0])
		rec.retired = nil
	}
}

// push puts x on top of the kept ones, dropping the bottom one when
// there are maxKept.
func push[T any](kept []T, x T) []T {
	if len(kept) == maxKept {
		var zero T
		copy(kept, kept[1:])
		kept[len(kept)-1] = zero
		kept = kept[:len(kept)-1]
	}
	return append(kept, x)
}

// room returns a kept room for n backends, the latest kept that fits
// without wasting much (reused), else a new one of n and spare more.
func (c *Converter) room(n, spare int) (room []Backend, reused bool) {
	for i := len(c.rooms) - 1; i >= 0; i-- {
		if r := c.rooms[i]; cap(r) >= n && cap(r) <= 2*n+8 {
			c.rooms = slices.Delete(c.rooms, i, i+1)
			return r, true
		}
	}
	return make([]Backend, 0, n+spare), false
}

// ForgetService drops what the converter keeps of a deleted Service and
// its slices.
func (c *Converter) ForgetService(namespace, name string) {
	delete(c.slots, objectKey{namespace, name})
}

// Len returns how many Services and EndpointSlices the converter keeps
// (not those kept in the callers' Slots).
func (c *Converter) Len() (services, slices int) {
	for _, slot := range c.slots {
		slices += slot.Slices()
	}
	return len(c.slots), slices
}

// newRecord returns a new record of svc, which takes over the slices of
// prev, the record of the version before (nil: none), when svc has a
// resourceVersion (a record without one is not kept).
func newRecord(svc *corev1.Service, prev *convertedService) *convertedService {
	rec := &convertedService{obj: svc}
	if serviceOf(svc, &rec.svc, rec.feRoom[:]) {
		rec.base = &rec.svc // one object with the record: a change reads one
		rec.warnings = len(rec.svc.Warnings)
	}
	if svc.ResourceVersion == "" || rec.base == nil {
		return rec // a service not balanced keeps no slices
	}
	rec.base.ref = &rec.ref
	if prev != nil {
		rec.takeOver(prev.slices)
	}
	return rec
}

// keep makes sls the slices of rec.
func (rec *convertedService) keep(sls []convertedSlice) {
	if len(sls) <= 1 {
		rec.slices = rec.one[:copy(rec.one[:], sls)]
		return
	}
	rec.slices = append([]convertedSlice(nil), sls...)
}

// takeOver makes sls, the slices of the version before, the slices of
// rec, without their rooms.
func (rec *convertedService) takeOver(sls []convertedSlice) {
	rec.keep(sls)
	for i := range rec.slices {
		rec.slices[i].room = nil
	}
}

// slice returns the parsed sl, parsing it unless rec has seen it; a
// parsed slice with a resourceVersion takes the place of the version
// before in rec (found by name).
func (c *Converter) slice(rec *convertedService, sl *discoveryv1.EndpointSlice) convertedSlice {
	// By object, else by the name's hash: a slice taken for another of
	// the same hash (never seen in practice) is only parsed again.
	h := maphash.String(c.seed, sl.Name)
	i := 0
	for i < len(rec.slices) && rec.slices[i].obj != sl && rec.slices[i].hash != h {
		i++
	}
	if i < len(rec.slices) && rec.slices[i].obj == sl {
		return rec.slices[i] // kept only with a resourceVersion
	}
	cs := convertedSlice{name: sl.Name, hash: h, obj: sl}
	// A slice that changed once will again: its room gets a few spare
	// backends, so that two versions of one more or one less backend
	// take turns in two rooms.
	spare := 0
	if i < len(rec.slices) {
		spare = 2 + len(sl.Endpoints)/8
	}
	cs.room = backends(sl, &cs.warnings, c.portName, c.hintsOf, func(n int) ([]Backend, bool) { return c.room(n, spare) })
	cs.backends = cs.room[:len(cs.room):len(cs.room)] // an append by a caller copies
	switch {
	case sl.ResourceVersion == "":
	case i < len(rec.slices):
		rec.retired = rec.slices[i].room
		rec.slices[i] = cs
	case len(rec.slices) == 0:
		rec.slices = rec.one[:1]
		rec.one[0] = cs
	default:
		rec.slices = append(rec.slices[:len(rec.slices):len(rec.slices)], cs)
	}
	return cs
}

// prune drops the slices of rec that are not among eps (deleted, or
// moved to another service).
func (c *Converter) prune(rec *convertedService, eps []*discoveryv1.EndpointSlice) {
	among := func(cs *convertedSlice) bool {
		for _, sl := range eps {
			if sl == cs.obj || sl.Name == cs.name {
				return true
			}
		}
		return false
	}
	for i := range rec.slices {
		if !among(&rec.slices[i]) {
			var kept []convertedSlice
			for j := range rec.slices {
				if among(&rec.slices[j]) {
					kept = append(kept, rec.slices[j])
				}
			}
			rec.keep(kept)
			return
		}
	}
}

// hintsOf returns the shared hints h gives (nil when it names no zone
// and no node).
func (c *Converter) hintsOf(h *discoveryv1.EndpointHints) *Hints {
	if len(h.ForZones) == 0 && len(h.ForNodes) == 0 {
		return nil
	}
	var key string
	if len(h.ForZones) == 1 && len(h.ForNodes) == 0 {
		key = h.ForZones[0].Name // the common case: no allocation
	} else {
		var b strings.Builder
		for _, z := range h.ForZones {
			b.WriteString(z.Name)
			b.WriteByte(',')
		}
		b.WriteByte('|')
		for _, n := range h.ForNodes {
			b.WriteString(n.Name)
			b.WriteByte(',')
		}
		key = b.String()
	}
	if x, ok := c.hints[key]; ok {
		return x
	}
	x := &Hints{}
	for _, z := range h.ForZones {
		x.Zones = append(x.Zones, z.Name)
	}
	for _, n := range h.ForNodes {
		x.Nodes = append(x.Nodes, n.Name)
	}
	c.hints[key] = x
	return x
}

// portName returns the shared list of the one port name n.
func (c *Converter) portName(n string) []string {
	l, ok := c.portNames[n]
	if !ok {
		l = []string{n}
		c.portNames[n] = l
	}
	return l
}
