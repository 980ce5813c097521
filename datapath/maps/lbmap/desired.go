package lbmap

import (
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// desired is a validated datapath.LBService in the maps' terms. backends
// are in the service's order (slots are handed out in it); order lists
// their indexes sorted by address (empty: backends are sorted already),
// the order of a frontend's members.
type desired struct {
	frontend datapath.L3n4Addr
	key      addrKey // the frontend's
	flags    uint8
	affinity uint32 // seconds
	backends []desiredBackend
	order    []int32
	ranges   []netip.Prefix // source ranges, sorted (parseRanges)
}

// pos returns the index in d.backends of the backend at position k of
// the address order.
func (d *desired) pos(k int) int {
	if len(d.order) > 0 {
		return int(d.order[k])
	}
	return k
}

// sorted returns the backend at position k of the address order.
func (d *desired) sorted(k int) *desiredBackend {
	if len(d.order) > 0 {
		return &d.backends[d.order[k]]
	}
	return &d.backends[k]
}

// desiredBackend is a backend of a desired service, without pointers
// (an initial sync parses 100,000 of them into one array).
type desiredBackend struct {
	key       addrKey
	state     datapath.BackendState
	clusterID uint32
}

// typeFlagsOf returns the flags of frontend kind t (ClusterIP: none);
// false for an unknown kind.
func typeFlagsOf(t datapath.ServiceType) (uint8, bool) {
	switch t {
	case "", datapath.SVCTypeClusterIP:
		return 0, true
	case datapath.SVCTypeNodePort:
		return FlagNodePort, true
	case datapath.SVCTypeExternalIP:
		return FlagExternalIP, true
	case datapath.SVCTypeLoadBalancer:
		return FlagLoadBalancer, true
	case datapath.SVCTypeHostPort:
		return FlagNodePort | FlagHostPort, true
	}
	return 0, false
}

// checkProto accepts the protocols a frontend may have.
func checkProto(p uint8) bool {
	return p == datapath.ProtoTCP || p == datapath.ProtoUDP || p == datapath.ProtoSCTP
}

// parse validates svc into d (the error names the field at fault),
// reusing the room of d's slices: a writer parses each upsert into the
// same desired, without allocating. On error d holds nothing usable.
func (d *desired) parse(svc datapath.LBService) error {
	if err := d.parseFrontend(&svc); err != nil {
		return err
	}
	return d.parseAllBackends(&svc)
}

// parseAllBackends is parse's second half: svc's backends, into d.
func (d *desired) parseAllBackends(svc *datapath.LBService) error {
	if msg := d.parseBackends(svc.Backends); msg != "" {
		return fmt.Errorf("service %s (%s): %s", svc.Frontend, svc.Name, msg)
	}
	return nil
}

// parseFrontend is parse's first half: all of svc but its backends.
func (d *desired) parseFrontend(svc *datapath.LBService) error {
	fe := svc.Frontend
	fail := func(format string, args ...any) error {
		return fmt.Errorf("service %s (%s): %s", fe, svc.Name, fmt.Sprintf(format, args...))
	}
	if !fe.Addr.IsValid() {
		return fail("frontend address %v is not a valid address", fe.Addr)
	}
	// A NodePort's unspecified address is Cilium's surrogate frontend,
	// which svcmanager.Desired writes beside the one per node address.
	if fe.Addr.IsUnspecified() && svc.Type != datapath.SVCTypeNodePort && svc.Type != datapath.SVCTypeHostPort {
		return fail("frontend address %v is unspecified: only a NodePort or HostPort frontend may be", fe.Addr)
	}
	fe.Addr = fe.Addr.Unmap().WithZone("") // the maps hold no zone
	if fe.Port == 0 {
		return fail("frontend port must not be 0")
	}
	if !checkProto(fe.Proto) {
		return fail("frontend protocol %d is not TCP, UDP or SCTP", fe.Proto)
	}
	if fe.Scope != datapath.ScopeExternal && fe.Scope != datapath.ScopeInternal {
		return fail("frontend scope %d is not external (0) or internal (1)", fe.Scope)
	}
	if fe.Scope == datapath.ScopeInternal && svc.TwoScopes {
		return fail("an internal-scope frontend cannot have two scopes (the external one has)")
	}
	flags, ok := typeFlagsOf(svc.Type)
	if !ok {
		return fail("type %q is not ClusterIP, NodePort, ExternalIPs, LoadBalancer or HostPort", svc.Type)
	}
	if svc.LocalOnly {
		flags |= FlagLocal
	}
	if svc.TwoScopes {
		flags |= FlagTwoScopes
	}
	d.frontend, d.key, d.flags, d.affinity = fe, keyOf(fe), flags, 0
	d.ranges = d.ranges[:0]
	if len(svc.SourceRanges) > 0 {
		if msg := d.parseRanges(svc.SourceRanges); msg != "" {
			return fail("%s", msg)
		}
		d.flags |= FlagSourceRange
	}
	if svc.SessionAffinityTimeout < 0 {
		return fail("session affinity timeout %v is negative", svc.SessionAffinityTimeout)
	}
	if svc.SessionAffinityTimeout > 0 {
		secs := (svc.SessionAffinityTimeout + time.Second - 1) / time.Second
		if secs > maxAffinitySeconds {
			return fail("session affinity timeout %v is too long", svc.SessionAffinityTimeout)
		}
		d.flags |= FlagAffinity
		d.affinity = uint32(secs)
	}
	return nil
}

// parseBackends validates bs, the backends of d.frontend, into
// d.backends and sorts them (sortBackends); it returns what is wrong
// with the first bad one, "" if none is. One pass validates, converts
// and checks the order (svcmanager hands the backends sorted); each key
// is written in place, field by field, and compared with the previous
// one kept in registers, not read back from memory just written.
func (d *desired) parseBackends(bs []datapath.LBBackend) string {
	fe := d.frontend
	fe4 := fe.Addr.Is4()
	if cap(d.backends) < len(bs) {
		d.backends = make([]desiredBackend, len(bs))
	}
	d.backends = d.backends[:len(bs)]
	d.order = d.order[:0]
	sorted := true
	var (
		prevIP   netip.Addr
		prevTail uint32
	)
	for i := range bs {
		b := &bs[i]
		ip := b.Addr.Addr.Unmap().WithZone("")
		proto := b.Addr.Proto
		if proto == 0 {
			proto = fe.Proto
		}
		if !ip.IsValid() || ip.IsUnspecified() || ip.Is4() != fe4 || b.Addr.Port == 0 || proto != fe.Proto ||
			b.State > datapath.BackendQuarantined {
			return badBackend(fe, i, b)
		}
		db := &d.backends[i]
		db.key.addr = ip.As16()
		db.key.port, db.key.proto, db.key.v4 = b.Addr.Port, proto, d.key.v4&keyV4 // a backend has no scope
		db.state, db.clusterID = b.State, b.ClusterID
		// The order of compareKeys, from the address in registers (not
		// the key just stored: reading it back stalls).
		tail := uint32(b.Addr.Port)<<8 | uint32(proto)
		if sorted && i > 0 {
			c := prevIP.Compare(ip)
			sorted = c < 0 || c == 0 && prevTail < tail
		}
		prevIP, prevTail = ip, tail
	}
	if sorted {
		return ""
	}
	if dup := d.sortBackends(); dup >= 0 {
		return fmt.Sprintf("backends[%d]: %s is listed twice", dup, d.backends[dup].key)
	}
	return ""
}

// badBackend returns what is wrong with backend b, at index i of the
// backends of frontend fe.
func badBackend(fe datapath.L3n4Addr, i int, b *datapath.LBBackend) string {
	a := b.Addr
	a.Addr = a.Addr.Unmap().WithZone("")
	if a.Proto == 0 {
		a.Proto = fe.Proto
	}
	switch {
	case !a.Addr.IsValid() || a.Addr.IsUnspecified():
		return fmt.Sprintf("backends[%d]: address %v is not a valid address", i, b.Addr.Addr)
	case a.Addr.Is4() != fe.Addr.Is4():
		return fmt.Sprintf("backends[%d]: %s is not of the frontend's address family", i, a)
	case a.Port == 0:
		return fmt.Sprintf("backends[%d]: port must not be 0", i)
	case a.Proto != fe.Proto:
		return fmt.Sprintf("backends[%d]: protocol of %s differs from the frontend's", i, a)
	default:
		return fmt.Sprintf("backends[%d]: state %d is not active, terminating or quarantined", i, b.State)
	}
}

// sortBackends sets d.order for backends that are not sorted (d.order
// stays empty when they are, the common case: svcmanager hands them
// sorted) and returns the index of the first backend listed twice, -1
// when none is. Sorting finds duplicates in n log n, where a scan per
// backend took n^2.
func (d *desired) sortBackends() int {
	bs := d.backends
	for i := range bs {
		d.order = append(d.order, int32(i))
	}
	slices.SortStableFunc(d.order, func(a, b int32) int { return compareKeys(bs[a].key, bs[b].key) })
	dup := -1
	for k := 1; k < len(d.order); k++ {
		if i := int(d.order[k]); bs[d.order[k-1]].key == bs[i].key && (dup < 0 || i < dup) {
			dup = i
		}
	}
	return dup
}
