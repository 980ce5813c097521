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
// IPs: externalTrafficPolicy; Local keeps this node's backends only; an
// external frontend whose two policies differ gets a second entry of the
// internal scope, which traffic from inside the cluster uses, with the
// backends of internalTrafficPolicy: Cilium's two scopes), the
// LoadBalancer frontends restricted to the source ranges of their family
// (shared with svc: never change them), and for a global service the
// remote backends merged per its affinity. The result is sorted by
// frontend, each frontend's backends by cluster and address, so that
// equal inputs give equal outputs.
func Desired(svc *Service, remote []Backend, node Node) []datapath.LBService {
	return desired(svc, svc.NamespacedName(), remote, node, nil, nil, options{})
}

// options switch off parts of what Desired gives (the zero value: all of
// it).
type options struct {
	// noRangeCheck: no frontend gets source ranges
	// (--enable-svc-source-range-check=false).
	noRangeCheck bool
	// noExternalIPs: no ExternalIPs frontends (--enable-external-ips=false).
	noExternalIPs bool
}

// desired is Desired with the service's name given (the manager keeps
// it, so that an update does not build it again) and, when arena is not
// nil, the backend lists appended to *arena, which the manager reuses
// from one update to the next: the lists are valid until its next use.
// The frontends are appended to out (the manager's room, else nil).
// opts are the manager's switches.
func desired(svc *Service, name string, remote []Backend, node Node, out []datapath.LBService, arena *[]datapath.LBBackend,
	opts options) []datapath.LBService {
	fes := svc.Frontends
	if slices.ContainsFunc(fes, nodeBound) {
		fes = expand(fes, node)
	}
	var ranges4, ranges6 []netip.Prefix // shared by the frontends of each family
	if len(svc.SourceRanges) > 0 && !opts.noRangeCheck {
		ranges4, ranges6 = rangesByFamily(svc.SourceRanges)
	}
	start := len(out)
	out = slices.Grow(out, len(fes))
	for _, fe := range fes {
		if opts.noExternalIPs && fe.Type == datapath.SVCTypeExternalIP {
			continue
		}
		local := localOnly(svc, fe.Type)
		two := fe.Type != datapath.SVCTypeClusterIP && svc.ExtLocal != svc.IntLocal
		out = append(out, datapath.LBService{
			Frontend: fe.Addr, Type: fe.Type, Name: name,
			SessionAffinityTimeout: svc.SessionAffinityTimeout, LocalOnly: local, TwoScopes: two,
			Backends:     selectBackends(svc, fe, remote, node, local, arena),
			SourceRanges: frontendRanges(fe, ranges4, ranges6),
		})
		if two {
			// The internal scope: traffic from inside the cluster to
			// this external frontend follows internalTrafficPolicy, as
			// kube-proxy and Cilium route it.
			in := fe
			in.Addr.Scope = datapath.ScopeInternal
			out = append(out, datapath.LBService{
				Frontend: in.Addr, Type: fe.Type, Name: name,
				SessionAffinityTimeout: svc.SessionAffinityTimeout, LocalOnly: svc.IntLocal,
				Backends: selectBackends(svc, in, remote, node, svc.IntLocal, arena),
			})
		}
	}
	mine := out[start:]
	cmpFrontend := func(a, b datapath.LBService) int { return compareAddr(a.Frontend, b.Frontend) }
	if !slices.IsSortedFunc(mine, cmpFrontend) {
		slices.SortStableFunc(mine, cmpFrontend)
	}
	mine = slices.CompactFunc(mine, func(a, b datapath.LBService) bool { return a.Frontend == b.Frontend })
	return out[:start+len(mine)]
}

// frontendRanges returns the source ranges of fe: its family's of the
// Service's (ranges4 or ranges6, nil when the Service has none) for a
// LoadBalancer frontend, none for another.
func frontendRanges(fe Frontend, ranges4, ranges6 []netip.Prefix) []netip.Prefix {
	switch {
	case fe.Type != datapath.SVCTypeLoadBalancer:
		return nil
	case fe.Addr.Addr.Is4():
		return ranges4
	}
	return ranges6
}

// expand returns the frontends with each NodePort one of the unspecified
// address followed by one per node address of its family (as Cilium
// does: the unspecified one serves the addresses the datapath finds on
// the node's devices).
func expand(fes []Frontend, node Node) []Frontend {
	out := make([]Frontend, 0, len(fes))
	for _, fe := range fes {
		out = append(out, fe)
		if !nodeBound(fe) || !fe.Addr.Addr.IsUnspecified() {
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

// nodeBound reports whether fe is served at the node's addresses: a
// NodePort, or a pod's hostPort, which the unspecified address stands
// for until expand.
func nodeBound(fe Frontend) bool {
	return fe.Type == datapath.SVCTypeNodePort || fe.Type == datapath.SVCTypeHostPort
}

// localOnly reports whether frontends of type t keep this node's
// backends only.
func localOnly(svc *Service, t datapath.ServiceType) bool {
	if t == datapath.SVCTypeClusterIP {
		return svc.IntLocal
	}
	return svc.ExtLocal
}

// picker decides which of a service's backends a frontend takes: same
// family and protocol, the port name when both have one, with a Local
// traffic policy this node's only, and with topology-aware routing
// (Cluster policy) those hinted for this node's zone only. A backend's port-name list is
// shared by the backends of one slice port (Converter), so the answer
// for the last list checked is kept: most backends cost no string
// comparison.
type picker struct {
	is4      bool
	proto    uint8
	name     string // the frontend's port name ("": any)
	local    bool
	node     string
	zone     string  // topology-aware routing applies: this zone's (or node's) backends only (topology)
	byNode   bool    // zone is this node's name: node hints
	lastList *string // the first element of the last port-name list checked
	lastLen  int
	lastOK   bool
}

func newPicker(fe Frontend, node Node, local bool) picker {
	return picker{is4: fe.Addr.Addr.Is4(), proto: fe.Addr.Proto, name: fe.PortName, local: local, node: node.Name}
}

// takes reports whether be serves the frontend: its family, protocol
// and port name (small enough to inline; the port-name check is
// portOK's). The Local policy is onNode's.
func (p *picker) takes(be *Backend) bool {
	return be.Addr.Addr.Is4() == p.is4 && be.Addr.Proto == p.proto &&
		(p.name == "" || len(be.PortNames) == 0 || p.portOK(be.PortNames))
}

// onNode reports whether be is on this node; backends without a node
// name count as local, as in Cilium.
func (p *picker) onNode(be *Backend) bool { return be.NodeName == "" || be.NodeName == p.node }

// takesLocal is takes with the Local policy applied when it is set, and
// topology-aware routing when it applies.
func (p *picker) takesLocal(be *Backend) bool {
	return p.takes(be) && (!p.local || p.onNode(be)) && (p.zone == "" || p.inZone(be))
}

// inZone reports whether be is hinted for p.zone (a zone, or with
// p.byNode a node).
func (p *picker) inZone(be *Backend) bool {
	if be.Hints == nil {
		return false
	}
	if p.byNode {
		return slices.Contains(be.Hints.Nodes, p.zone)
	}
	return slices.Contains(be.Hints.Zones, p.zone)
}

// topology decides topology-aware routing for the frontend p picks for,
// by kube-proxy's rule, and sets p.zone (and p.byNode): when every ready
// backend it takes has node hints and one is hinted for this node, this
// node's (PreferSameNode); else when every one has zone hints and one is
// hinted for node's zone, that zone's; else none. A backend without
// hints ends the scan: a service without hints costs one backend's look.
func (p *picker) topology(bes []Backend, node Node) {
	allNodes, allZones, forNode, forZone := true, node.Zone != "", false, false
	for i := range bes {
		be := &bes[i]
		if be.Condition != Ready || !p.takes(be) {
			continue
		}
		h := be.Hints
		if h == nil {
			return
		}
		if len(h.Nodes) == 0 {
			allNodes = false
		} else if slices.Contains(h.Nodes, node.Name) {
			forNode = true
		}
		if len(h.Zones) == 0 {
			allZones = false
		} else if node.Zone != "" && slices.Contains(h.Zones, node.Zone) {
			forZone = true
		}
		if !allNodes && !allZones {
			return
		}
	}
	switch {
	case allNodes && forNode:
		p.zone, p.byNode = node.Name, true
	case allZones && forZone:
		p.zone = node.Zone
	}
}

// portOK reports whether names holds the frontend's port name.
//
//go:noinline
func (p *picker) portOK(names []string) bool {
	if first := &names[0]; first != p.lastList || len(names) != p.lastLen {
		p.lastList, p.lastLen, p.lastOK = first, len(names), slices.Contains(names, p.name)
	}
	return p.lastOK
}

// selectBackends picks fe's backends and their states without copies of
// the service's backends: one pass for a frontend that takes this
// cluster's backends only (pickLocal), else two (count, then convert).
func selectBackends(svc *Service, fe Frontend, remote []Backend, node Node, local bool, arena *[]datapath.LBBackend) []datapath.LBBackend {
	p := newPicker(fe, node, local)
	if !local {
		p.topology(svc.Backends, node)
	}
	global := svc.Global && !local // remote backends are never on this node
	if !global && svc.Affinity != AffinityRemote {
		return p.pickLocal(svc.Backends, arena)
	}
	return p.pickTwoPass(svc, remote, global, arena)
}

// pickTwoPass is selectBackends for any frontend: it counts the local
// and (global: remote) backends fe takes, chooses per the affinity, then
// converts the chosen ones.
func (p *picker) pickTwoPass(svc *Service, remote []Backend, global bool, arena *[]datapath.LBBackend) []datapath.LBBackend {
	isLocal := p.takesLocal
	isRemote := p.takes // remote backends are never on this node
	locals := tally(svc.Backends, isLocal)
	var remotes counts
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
		out = sortBackends(out)
	}
	if arena != nil { // out is the arena's tail
		*arena = (*arena)[:len(*arena)+len(out)]
	}
	return out
}

// pickLocal is selectBackends for a frontend of this cluster's backends
// only, in one pass: serving terminating backends are written
// terminating and made active afterwards when none taken is ready (the
// rare case), and the order is checked as the list is built.
func (p *picker) pickLocal(bes []Backend, arena *[]datapath.LBBackend) []datapath.LBBackend {
	var out []datapath.LBBackend
	start := 0
	if arena != nil {
		out, start = *arena, len(*arena)
	} else {
		out = make([]datapath.LBBackend, 0, len(bes)) // at most all: one allocation
	}
	ready, serving, sorted := 0, 0, true
	for i := range bes {
		be := &bes[i]
		if !p.takesLocal(be) {
			continue
		}
		st := datapath.BackendTerminating
		switch be.Condition {
		case Ready:
			st = datapath.BackendActive
			ready++
		case ServingTerminating:
			serving++
		}
		if n := len(out); sorted && n > start {
			prev := &out[n-1]
			sorted = prev.ClusterID < be.ClusterID || prev.ClusterID == be.ClusterID && compareAddr(prev.Addr, be.Addr) < 0
		}
		out = append(out, datapath.LBBackend{Addr: be.Addr, ClusterID: be.ClusterID, State: st, NodeName: be.NodeName})
	}
	list := out[start:len(out):len(out)]
	if ready == 0 && serving > 0 { // no ready backend: the serving terminating ones take new connections
		k := 0
		for i := range bes {
			if be := &bes[i]; p.takesLocal(be) {
				if be.Condition == ServingTerminating {
					list[k].State = datapath.BackendActive
				}
				k++
			}
		}
	}
	if !sorted {
		list = sortBackends(list)
	}
	if arena != nil {
		*arena = out[:start+len(list)]
	}
	return list
}

// sortBackends sorts bes by compareBackends and keeps a backend listed
// twice (two slices) once, in its best state.
func sortBackends(bes []datapath.LBBackend) []datapath.LBBackend {
	slices.SortFunc(bes, compareBackends)
	return slices.CompactFunc(bes, func(a, b datapath.LBBackend) bool { return a.ClusterID == b.ClusterID && a.Addr == b.Addr })
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

// compareAddr orders addresses by IP, port, protocol, scope.
func compareAddr(a, b datapath.L3n4Addr) int {
	if c := a.Addr.Compare(b.Addr); c != 0 {
		return c
	}
	if a.Port != b.Port {
		return cmp.Compare(a.Port, b.Port)
	}
	if a.Proto != b.Proto {
		return cmp.Compare(a.Proto, b.Proto)
	}
	return cmp.Compare(a.Scope, b.Scope)
}

// unspecified returns the unspecified address of IPv4 (is4) or IPv6.
func unspecified(is4 bool) netip.Addr {
	if is4 {
		return netip.IPv4Unspecified()
	}
	return netip.IPv6Unspecified()
}
