package lbmap

import (
	"fmt"
	"time"

	"github.com/apiary-net/apiary/datapath"
)

// desired is a validated datapath.LBService in the maps' terms.
type desired struct {
	frontend datapath.L3n4Addr
	flags    uint8
	affinity uint32 // seconds
	backends []desiredBackend
}

type desiredBackend struct {
	addr      datapath.L3n4Addr
	state     datapath.BackendState
	clusterID uint32
}

// typeFlags are the flags of each frontend kind (ClusterIP: none).
var typeFlags = map[datapath.ServiceType]uint8{
	"":                           0,
	datapath.SVCTypeClusterIP:    0,
	datapath.SVCTypeNodePort:     FlagNodePort,
	datapath.SVCTypeExternalIP:   FlagExternalIP,
	datapath.SVCTypeLoadBalancer: FlagLoadBalancer,
}

// checkProto accepts the protocols a frontend may have.
func checkProto(p uint8) bool {
	return p == datapath.ProtoTCP || p == datapath.ProtoUDP || p == datapath.ProtoSCTP
}

// listed reports whether bs has a backend at a. A linear scan: a
// service has a few backends, and a map per write cost more; services
// with thousands are rare and written rarely.
func listed(bs []desiredBackend, a datapath.L3n4Addr) bool {
	for i := range bs {
		if bs[i].addr == a {
			return true
		}
	}
	return false
}

// desiredOf validates svc: the error names the field at fault.
func desiredOf(svc datapath.LBService) (desired, error) {
	fe := svc.Frontend
	fail := func(format string, args ...any) (desired, error) {
		return desired{}, fmt.Errorf("service %s (%s): %s", fe, svc.Name, fmt.Sprintf(format, args...))
	}
	if !fe.Addr.IsValid() || fe.Addr.IsUnspecified() {
		return fail("frontend address %v is not a valid address", fe.Addr)
	}
	fe.Addr = fe.Addr.Unmap()
	if fe.Port == 0 {
		return fail("frontend port must not be 0")
	}
	if !checkProto(fe.Proto) {
		return fail("frontend protocol %d is not TCP, UDP or SCTP", fe.Proto)
	}
	flags, ok := typeFlags[svc.Type]
	if !ok {
		return fail("type %q is not ClusterIP, NodePort, ExternalIPs or LoadBalancer", svc.Type)
	}
	if svc.LocalOnly {
		flags |= FlagLocal
	}
	d := desired{frontend: fe, flags: flags}
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
	d.backends = make([]desiredBackend, 0, len(svc.Backends))
	for i, b := range svc.Backends {
		a := b.Addr
		a.Addr = a.Addr.Unmap()
		if a.Proto == 0 {
			a.Proto = fe.Proto
		}
		switch {
		case !a.Addr.IsValid() || a.Addr.IsUnspecified():
			return fail("backends[%d]: address %v is not a valid address", i, b.Addr.Addr)
		case a.Addr.Is4() != fe.Addr.Is4():
			return fail("backends[%d]: %s is not of the frontend's address family", i, a)
		case a.Port == 0:
			return fail("backends[%d]: port must not be 0", i)
		case a.Proto != fe.Proto:
			return fail("backends[%d]: protocol of %s differs from the frontend's", i, a)
		case b.State > datapath.BackendQuarantined:
			return fail("backends[%d]: state %d is not active, terminating or quarantined", i, b.State)
		case listed(d.backends, a):
			return fail("backends[%d]: %s is listed twice", i, a)
		}
		d.backends = append(d.backends, desiredBackend{addr: a, state: b.State, clusterID: b.ClusterID})
	}
	return d, nil
}
