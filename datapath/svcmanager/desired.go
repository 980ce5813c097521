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
	var out []datapath.LBService
	for _, fe := range expand(svc.Frontends, node) {
		local := localOnly(svc, fe.Type)
		lb := datapath.LBService{
			Frontend: fe.Addr, Type: fe.Type, Name: svc.NamespacedName(),
			SessionAffinityTimeout: svc.SessionAffinityTimeout, LocalOnly: local,
		}
		lb.Backends = selectBackends(svc, fe, remote, node, local)
		out = append(out, lb)
	}
	slices.SortFunc(out, func(a, b datapath.LBService) int { return compareAddr(a.Frontend, b.Frontend) })
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
func matches(be Backend, fe Frontend) bool {
	if be.Addr.Addr.Is4() != fe.Addr.Addr.Is4() || be.Addr.Proto != fe.Addr.Proto {
		return false
	}
	return fe.PortName == "" || len(be.PortNames) == 0 || slices.Contains(be.PortNames, fe.PortName)
}

// selectBackends picks fe's backends and their states.
func selectBackends(svc *Service, fe Frontend, remote []Backend, node Node, local bool) []datapath.LBBackend {
	locals := make([]Backend, 0, len(svc.Backends))
	var remotes []Backend
	for _, be := range svc.Backends {
		// Backends without a node name count as local, as in Cilium.
		if matches(be, fe) && (!local || be.NodeName == "" || be.NodeName == node.Name) {
			locals = append(locals, be)
		}
	}
	if svc.Global && !local { // remote backends are never on this node
		for _, be := range remote {
			if matches(be, fe) {
				remotes = append(remotes, be)
			}
		}
	}
	useLocal, useRemote := affinity(svc.Affinity, locals, remotes)
	var chosen []Backend // locals and remotes are this call's own: states may sort them in place
	if useLocal {
		chosen = locals
	}
	if useRemote {
		chosen = append(chosen, remotes...)
	}
	return states(chosen)
}

// affinity is Cilium's choice between local and remote backends: none
// uses both; local uses the remote ones only while no local one is
// ready and some remote one is healthy; remote the reverse (healthy:
// ready or still serving).
func affinity(a Affinity, locals, remotes []Backend) (useLocal, useRemote bool) {
	switch a {
	case AffinityLocal:
		return true, count(locals, Ready) == 0 && healthy(remotes) > 0
	case AffinityRemote:
		return healthy(remotes) == 0 && healthy(locals) > 0, true
	default:
		return true, true
	}
}

func count(bes []Backend, c Condition) int {
	n := 0
	for _, be := range bes {
		if be.Condition == c {
			n++
		}
	}
	return n
}

func healthy(bes []Backend) int { return count(bes, Ready) + count(bes, ServingTerminating) }

// states gives each backend its datapath state: ready ones are active;
// serving terminating ones are active when no backend is ready (the
// fallback of Kubernetes' KEP-1669), terminating otherwise; terminating
// not serving ones are kept as terminating. A backend listed twice (two
// slices) is kept once, in its best condition.
func states(bes []Backend) []datapath.LBBackend {
	fallback := count(bes, Ready) == 0
	slices.SortFunc(bes, func(a, b Backend) int {
		return cmp.Or(cmp.Compare(a.ClusterID, b.ClusterID), compareAddr(a.Addr, b.Addr), cmp.Compare(a.Condition, b.Condition))
	})
	bes = slices.CompactFunc(bes, func(a, b Backend) bool { return a.ClusterID == b.ClusterID && a.Addr == b.Addr })
	out := make([]datapath.LBBackend, 0, len(bes))
	for _, be := range bes {
		st := datapath.BackendActive
		switch {
		case be.Condition == ServingTerminating && !fallback, be.Condition == Terminating:
			st = datapath.BackendTerminating
		}
		out = append(out, datapath.LBBackend{Addr: be.Addr, ClusterID: be.ClusterID, State: st, NodeName: be.NodeName})
	}
	return out
}

// compareAddr orders addresses by IP, port, protocol.
func compareAddr(a, b datapath.L3n4Addr) int {
	return cmp.Or(a.Addr.Compare(b.Addr), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Proto, b.Proto))
}

// unspecified returns the unspecified address of IPv4 (is4) or IPv6.
func unspecified(is4 bool) netip.Addr {
	if is4 {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}
