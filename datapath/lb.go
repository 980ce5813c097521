package datapath

import (
	"fmt"
	"iter"
	"net/netip"
	"time"
)

// L4 protocols of a service frontend or backend (IANA numbers, as in the
// BPF maps).
const (
	ProtoTCP  uint8 = 6
	ProtoUDP  uint8 = 17
	ProtoSCTP uint8 = 132
)

// L3n4Addr is an address, a port and an L4 protocol: a service frontend
// or a backend.
type L3n4Addr struct {
	Addr  netip.Addr
	Port  uint16
	Proto uint8
	// Scope is a frontend's lookup scope (Cilium's): ScopeExternal, or
	// ScopeInternal for the second entry of a frontend whose
	// externalTrafficPolicy is Local, which traffic from inside the
	// cluster uses. Backends have ScopeExternal.
	Scope uint8
}

// Frontend lookup scopes (Cilium's LB_LOOKUP_SCOPE_*).
const (
	ScopeExternal uint8 = 0
	ScopeInternal uint8 = 1
)

// String formats the address as Cilium's CLI does: 10.96.0.10:53/UDP,
// with /i for the internal scope.
func (a L3n4Addr) String() string {
	proto := fmt.Sprint(a.Proto)
	switch a.Proto {
	case ProtoTCP:
		proto = "TCP"
	case ProtoUDP:
		proto = "UDP"
	case ProtoSCTP:
		proto = "SCTP"
	}
	out := netip.AddrPortFrom(a.Addr, a.Port).String() + "/" + proto
	if a.Scope == ScopeInternal {
		out += "/i"
	}
	return out
}

// ServiceType is the kind of frontend, in Cilium's spelling.
type ServiceType string

// Frontend kinds.
const (
	SVCTypeClusterIP    ServiceType = "ClusterIP"
	SVCTypeNodePort     ServiceType = "NodePort"
	SVCTypeExternalIP   ServiceType = "ExternalIPs"
	SVCTypeLoadBalancer ServiceType = "LoadBalancer"
	// SVCTypeHostPort is a pod's hostPort on this node (Cilium's
	// HostPort): balanced like a NodePort, to that pod only.
	SVCTypeHostPort ServiceType = "HostPort"
)

// BackendState is a backend's state in the datapath: only active
// backends are chosen for new connections; terminating ones keep their
// established connections.
type BackendState uint8

// Backend states.
const (
	BackendActive BackendState = iota
	BackendTerminating
	BackendQuarantined
)

// LBBackend is one backend of a frontend.
type LBBackend struct {
	Addr L3n4Addr
	// ClusterID is the cluster that hosts the backend (0: this one).
	ClusterID uint32
	State     BackendState
	// Zone and NodeName are informational (service list).
	NodeName string
}

// LBService is one frontend and the backends it balances to: what the
// service manager asks the datapath to hold.
type LBService struct {
	Frontend L3n4Addr
	Type     ServiceType
	// Name is namespace/name of the Service (informational).
	Name string
	// Backends in the order the manager chose; the datapath picks among
	// the active ones.
	Backends []LBBackend
	// SessionAffinity ClientIP with its timeout (0: no affinity).
	SessionAffinityTimeout time.Duration
	// LocalOnly: externalTrafficPolicy/internalTrafficPolicy Local for
	// this frontend (Backends already hold only the node's own).
	LocalOnly bool
	// TwoScopes is set on the external entry of a frontend that also has
	// an internal one (Frontend.Scope ScopeInternal, the same address):
	// traffic from inside the cluster (the endpoints' and the socket
	// programs) then uses the internal entry's backends, traffic from
	// outside (NodePort programs) this one's.
	TwoScopes bool
	// SourceRanges, when not empty, are the only clients from outside the
	// cluster that reach the frontend (loadBalancerSourceRanges of a
	// LoadBalancer frontend): prefixes of the frontend's family, masked.
	// The unspecified address's host prefix (0.0.0.0/32, ::/128) matches
	// no client: a frontend restricted to it is closed from outside.
	SourceRanges []netip.Prefix
}

// LBMapWriter writes services to the BPF load-balancing maps. The
// datapath allocates service and backend ids itself and keeps a backend
// that several services share once.
// The backend lists it is handed are the caller's, who may reuse their
// arrays once a call has returned: a writer copies what it keeps.
type LBMapWriter interface {
	// UpsertService makes the datapath balance svc.Frontend to exactly
	// svc.Backends, writing only what changed.
	UpsertService(svc LBService) error
	// DeleteService removes a frontend; none is not an error.
	DeleteService(frontend L3n4Addr) error
	// Changes returns how many UpsertService and DeleteService calls
	// changed what the datapath holds (a call that finds everything as
	// asked writes nothing and counts nothing).
	Changes() uint64
	// ReconcileServices makes the maps hold exactly svcs: the full
	// reconciliation after the initial sync, which removes what a
	// previous run left behind while keeping ids of what stays, so
	// established connections keep their backend across restarts.
	// svcs may be ranged over more than once, and yields the same
	// frontends in the same order each time; a yielded service's
	// Backends are valid only until the next one is yielded (the caller
	// may build each list in one buffer, so that the initial sync of a
	// large cluster never holds every list at once). A writer keeps
	// copies of what it keeps.
	ReconcileServices(svcs iter.Seq[LBService]) (added, removed int, err error)
}
