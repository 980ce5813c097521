package svcmanager

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/datapath"
)

// Desired returns the frontends of svc with their backends: the NodePort
// frontends expanded to the node's addresses, each frontend with the
// backends of its port name and family, the traffic policies applied
// (ClusterIP: internalTrafficPolicy; NodePort, LoadBalancer and external
// IPs: externalTrafficPolicy; Local keeps this node's backends only), and
// for a global service the remote backends merged per its affinity. The
// result is sorted by frontend, each frontend's backends by cluster and
// address, so that equal inputs give equal outputs.
func Desired(svc *Service, remote []Backend, node Node) []datapath.LBService {
	return desired(svc, svc.NamespacedName(), remote, node, nil)
}

// desired is Desired with the service's name given (the manager keeps
// it, so that an update does not build it again) and, when arena is not
// nil, the backend lists appended to *arena, which the manager reuses
// from one update to the next: the lists are valid until its next use.
func desired(svc *Service, name string, remote []Backend, node Node, arena *[]datapath.LBBackend) []datapath.LBService {
	fes := svc.Frontends
	if slices.ContainsFunc(fes, func(fe Frontend) bool { return fe.Type == datapath.SVCTypeNodePort }) {
		fes = expand(fes, node)
	}
	out := make([]datapath.LBService, 0, len(fes))
	for _, fe := range fes {
		local := localOnly(svc, fe.Type)
		out = append(out, datapath.LBService{
			Frontend: fe.Addr, Type: fe.Type, Name: name,
			SessionAffinityTimeout: svc.SessionAffinityTimeout, LocalOnly: local,
			Backends: selectBackends(svc, fe, remote, node, local, arena),
		})
	}
	cmpFrontend := func(a, b datapath.LBService) int { return compareAddr(a.Frontend, b.Frontend) }
	if !slices.IsSortedFunc(out, cmpFrontend) {
		slices.SortStableFunc(out, cmpFrontend)
	}
	return slices.CompactFunc(out, func(a, b datapath.LBService) bool { return a.Frontend == b.Frontend })
}

// expand returns the frontends with each NodePort one of the unspecified
// address followed by one per node address of its family (as Cilium
// does: the unspecified one serves the addresses the datapath finds on
// the node's devices).
func expand(fes []Frontend, node Node) []Frontend {
	out := make([]Frontend, 0, len(fes))
	for _, fe := range fes {
		out = append(out, fe)
		if fe.Type != datapath.SVCTypeNodePort || !fe.Addr.Addr.IsUnspecified() {
			continue
		}
		for _, a := range node.Addrs {
			if a.Is4() == fe.Addr.Addr.Is4() {
				x := fe
				x.Addr.Addr = a
				out = append(out, x)
			}
		}
	}
	return out
}

// localOnly reports whether frontends of type t keep this node's
// backends only.
func localOnly(svc *Service, t datapath.ServiceType) bool {
	if t == datapath.SVCTypeClusterIP {
		return svc.IntLocal
	}
	return svc.ExtLocal
}

// matches reports whether be serves fe: same family and protocol, and
// the port name when both have one.
func matches(be *Backend, fe Frontend) bool {
	if be.Addr.Addr.Is4() != fe.Addr.Addr.Is4() || be.Addr.Proto != fe.Addr.Proto {
		return false
	}
	return fe.PortName == "" || len(be.PortNames) == 0 || slices.Contains(be.PortNames, fe.PortName)
}

// selectBackends picks fe's backends and their states, in two passes
// over the service's backends (count, then convert) and without copies
// of them: the cost of an endpoint change stays that of one list.
func selectBackends(svc *Service, fe Frontend, remote []Backend, node Node, local bool, arena *[]datapath.LBBackend) []datapath.LBBackend {
	isLocal := func(be *Backend) bool {
		// Backends without a node name count as local, as in Cilium.
		return matches(be, fe) && (!local || be.NodeName == "" || be.NodeName == node.Name)
	}
	isRemote := func(be *Backend) bool { return matches(be, fe) }
	locals := tally(svc.Backends, isLocal)
	var remotes counts
	global := svc.Global && !local // remote backends are never on this node
	if global {
		remotes = tally(remote, isRemote)
	}
	useLocal, useRemote := affinity(svc.Affinity, locals, remotes)
	var n, ready int
	if useLocal {
		n, ready = n+locals.n, ready+locals.ready
	}
	if useRemote {
		n, ready = n+remotes.n, ready+remotes.ready
	}
	var out []datapath.LBBackend
	if arena == nil {
		out = make([]datapath.LBBackend, 0, n)
	} else {
		start := len(*arena)
		*arena = slices.Grow(*arena, n)
		out = (*arena)[start : start : start+n]
	}
	if useLocal {
		out = appendStates(out, svc.Backends, isLocal, ready == 0)
	}
	if useRemote && global {
		out = appendStates(out, remote, isRemote, ready == 0)
	}
	if !strictlySorted(out) { // the common case: sorted already, one slice
		slices.SortFunc(out, compareBackends)
		// A backend listed twice (two slices) is kept once, in its best
		// state.
		out = slices.CompactFunc(out, func(a, b datapath.LBBackend) bool { return a.ClusterID == b.ClusterID && a.Addr == b.Addr })
	}
	if arena != nil { // out is the arena's tail
		*arena = (*arena)[:len(*arena)+len(out)]
	}
	return out
}

// counts are the backends one side (local or remote) offers a frontend.
type counts struct{ n, ready, serving int }

// healthy counts the ready and the serving terminating ones.
func (c counts) healthy() int { return c.ready + c.serving }

func tally(bes []Backend, use func(*Backend) bool) counts {
	var c counts
	for i := range bes {
		be := &bes[i]
		if !use(be) {
			continue
		}
		c.n++
		switch be.Condition {
		case Ready:
			c.ready++
		case ServingTerminating:
			c.serving++
		}
	}
	return c
}

// affinity is Cilium's choice between local and remote backends: none
// uses both; local uses the remote ones only while no local one is
// ready and some remote one is healthy; remote the reverse (healthy:
// ready or still serving).
func affinity(a Affinity, locals, remotes counts) (useLocal, useRemote bool) {
	switch a {
	case AffinityLocal:
		return true, locals.ready == 0 && remotes.healthy() > 0
	case AffinityRemote:
		return remotes.healthy() == 0 && locals.healthy() > 0, true
	default:
		return true, true
	}
}

// appendStates appends the backends of bes that use selects, each with
// its datapath state: ready ones are active; serving terminating ones
// are active when no chosen backend is ready (fallback, Kubernetes'
// KEP-1669), terminating otherwise; terminating not serving ones are
// kept as terminating.
func appendStates(out []datapath.LBBackend, bes []Backend, use func(*Backend) bool, fallback bool) []datapath.LBBackend {
	for i := range bes {
		be := &bes[i]
		if !use(be) {
			continue
		}
		st := datapath.BackendActive
		switch {
		case be.Condition == ServingTerminating && !fallback, be.Condition == Terminating:
			st = datapath.BackendTerminating
		}
		out = append(out, datapath.LBBackend{Addr: be.Addr, ClusterID: be.ClusterID, State: st, NodeName: be.NodeName})
	}
	return out
}

// compareBackends orders backends by cluster, address, state (the best
// first), node name.
func compareBackends(a, b datapath.LBBackend) int {
	if a.ClusterID != b.ClusterID {
		return cmp.Compare(a.ClusterID, b.ClusterID)
	}
	if c := compareAddr(a.Addr, b.Addr); c != 0 {
		return c
	}
	if a.State != b.State {
		return cmp.Compare(a.State, b.State)
	}
	return cmp.Compare(a.NodeName, b.NodeName)
}

// strictlySorted reports whether bes are in compareBackends' order with
// no backend (cluster and address) twice.
func strictlySorted(bes []datapath.LBBackend) bool {
	for i := 1; i < len(bes); i++ {
		a, b := &bes[i-1], &bes[i]
		if a.ClusterID != b.ClusterID {
			if a.ClusterID > b.ClusterID {
				return false
			}
			continue
		}
		if compareAddr(a.Addr, b.Addr) >= 0 {
			return false
		}
	}
	return true
}

// compareAddr orders addresses by IP, port, protocol.
func compareAddr(a, b datapath.L3n4Addr) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	if a.Port != b.Port {
		return cmp.Compare(a.Port, b.Port)
	}
	return cmp.Compare(a.Proto, b.Proto)
}

// unspecified returns the unspecified address of IPv4 (is4) or IPv6.
func unspecified(is4 bool) netip.Addr {
	if is4 {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}
