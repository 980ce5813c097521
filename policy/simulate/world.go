package simulate

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// labelNamespaceName is the label Kubernetes puts on every namespace.
const labelNamespaceName = "kubernetes.io/metadata.name"

// Simulation is a loaded scenario: its identities allocated, its
// policies in a repository and every endpoint's map state distilled.
type Simulation struct {
	file      string
	scenario  *Scenario
	endpoints []*endpoint
	byRef     map[string]*endpoint
	byIP      map[netip.Addr]*endpoint
	repo      *policy.Repository
	cache     *selectorcache.Cache
	idents    map[string]*identity.Identity // by sorted label list
	// hostIdents are the identities of the queries' addresses that are
	// no endpoints (their /32 or /128 CIDR identity, or world-ipv4 /
	// world-ipv6 when no policy prefix but a /0 covers them), by
	// address, so that a query does not rebuild the address's labels
	// (129 for IPv6).
	hostIdents map[netip.Addr]*identity.Identity
	nextID     identity.NumericIdentity
	nextCIDR   identity.NumericIdentity
	epIdent    map[*endpoint]*identity.Identity
	mapStates  map[*endpoint]policy.MapState
	// defaultDeny says, per local endpoint and direction, whether a rule
	// selecting it puts it in default deny (SelectorPolicy.DefaultDeny).
	defaultDeny map[*endpoint][2]bool
	// peerPorts are the named ports of every endpoint, by identity, which
	// egress rules' port names resolve against.
	peerPorts *policy.PeerPortTable
	warnings  []string
}

// Load parses and validates a scenario file and prepares its simulation.
// Every problem is reported, one error per entry, naming the file and the
// entry; errors.Is(err, ErrInvalid) holds for problems of the scenario
// itself (policy documents report *api.DocumentError).
func Load(name string, data []byte) (*Simulation, error) {
	s, err := ParseScenario(name, data)
	if err != nil {
		return nil, err
	}
	return New(name, s)
}

// New validates a parsed scenario, read from the file name, and prepares
// its simulation; see Load.
func New(name string, s *Scenario) (*Simulation, error) {
	if s.Cluster == "" {
		s.Cluster = defaultCluster
	}
	v := &validator{file: name}
	v.check("cluster", checkNames(s.Cluster, ""))
	namespaces := v.namespaces(s)
	eps, byRef, byIP := v.endpoints(s)
	pols := v.policies(s)
	sim := &Simulation{
		file: name, scenario: s, endpoints: eps, byRef: byRef, byIP: byIP,
		cache: selectorcache.New(), idents: map[string]*identity.Identity{},
		hostIdents: map[netip.Addr]*identity.Identity{}, nextID: identity.MinAllocationIdentity, nextCIDR: identity.ScopeLocal | 1,
		epIdent: map[*endpoint]*identity.Identity{}, mapStates: map[*endpoint]policy.MapState{},
		defaultDeny: map[*endpoint][2]bool{},
		peerPorts:   policy.NewPeerPortTable(), warnings: v.warnings,
	}
	for i, q := range s.Queries {
		sim.validateQuery(v, i, q)
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	sim.build(namespaces, pols)
	return sim, nil
}

// build allocates the identities of the endpoints, of the prefixes in the
// policies and of the queries' addresses that are no endpoints, records
// every endpoint's named ports (of every cluster, as the ipcache knows
// them), adds the policies and distills every local endpoint's map
// state.
func (sim *Simulation) build(namespaces map[string]Namespace, pols []*policyapi.Policy) {
	sim.repo = policy.NewRepository(sim.cache)
	sim.repo.SetPeerNamedPorts(sim.peerPorts)
	sim.cache.OnIdentitiesChanged(added(identity.ReservedIdentities()...))
	for _, ep := range sim.endpoints {
		id := sim.allocate(endpointLabels(ep, namespaces))
		sim.epIdent[ep] = id
		sim.peerPorts.Upsert(ep.cluster+"/"+ep.spec.Namespace+"/"+ep.spec.Name, id.ID, ep.ports)
	}
	for _, p := range pols {
		sim.repo.ReplaceByLabels(p.Labels, p.Rules...)
	}
	for _, prefix := range sim.repo.CIDRPrefixes() {
		sim.allocate(identity.CIDRLabels(prefix))
	}
	prefixes := sim.repo.CIDRPrefixes()
	for _, q := range sim.scenario.Queries {
		for _, ref := range []string{q.From, q.To} {
			ip, err := netip.ParseAddr(ref)
			if ip = ip.Unmap(); err == nil && sim.byIP[ip] == nil && sim.hostIdents[ip] == nil {
				sim.hostIdents[ip] = sim.addressIdentity(ip, prefixes)
			}
		}
	}
	sim.distill()
}

// addressIdentity returns the identity of ip, an address that is no
// endpoint: its /32 or /128 CIDR identity when a policy prefix covers it
// (the agent's ipcache then holds a prefix for it), else the world
// identity of its family, which is what the datapath gives an address no
// ipcache prefix covers.
func (sim *Simulation) addressIdentity(ip netip.Addr, prefixes []netip.Prefix) *identity.Identity {
	for _, p := range prefixes {
		if p.Bits() > 0 && p.Contains(ip) {
			return sim.allocate(hostCIDRLabels(ip))
		}
	}
	id := identity.ReservedWorldIPv4
	if ip.Is6() {
		id = identity.ReservedWorldIPv6
	}
	return &identity.Identity{ID: id, Labels: identity.ReservedLabels(id)}
}

// hostCIDRLabels returns the CIDR labels of ip's /32 or /128.
func hostCIDRLabels(ip netip.Addr) labels.Labels {
	return identity.CIDRLabels(netip.PrefixFrom(ip, ip.BitLen()))
}

func added(idents ...*identity.Identity) []identity.Change {
	out := make([]identity.Change, len(idents))
	for i, id := range idents {
		out[i] = identity.Change{Kind: identity.Added, Identity: id}
	}
	return out
}

// allocate returns the identity of ls, allocating it (and telling the
// selector cache) the first time: ids from MinAllocationIdentity for
// endpoints, local-scope ids for CIDR label sets.
func (sim *Simulation) allocate(ls labels.Labels) *identity.Identity {
	key := ls.SortedList()
	if id, ok := sim.idents[key]; ok {
		return id
	}
	id := &identity.Identity{Labels: ls}
	if identity.IsCIDRLabels(ls) {
		id.ID, sim.nextCIDR = sim.nextCIDR, sim.nextCIDR+1
	} else {
		id.ID, sim.nextID = sim.nextID, sim.nextID+1
	}
	sim.idents[key] = id
	sim.cache.OnIdentitiesChanged(added(id))
	return id
}

// endpointLabels returns the identity labels the agent gives a pod: its
// labels, its namespace, its namespace's labels and its cluster, all of
// source k8s, and the generated named-ports label of its named ports. A namespace the scenario does not list has only
// kubernetes.io/metadata.name.
func endpointLabels(ep *endpoint, namespaces map[string]Namespace) labels.Labels {
	ls := labels.FromMap(labels.SourceK8s, ep.spec.Labels)
	nsLabels := maps.Clone(namespaces[ep.spec.Namespace].Labels)
	if nsLabels == nil {
		nsLabels = map[string]string{}
	}
	if _, ok := nsLabels[labelNamespaceName]; !ok {
		nsLabels[labelNamespaceName] = ep.spec.Namespace
	}
	for _, k := range slices.Sorted(maps.Keys(nsLabels)) {
		ls = ls.With(labels.New(labels.SourceK8s, labels.PrefixNamespaceLabels+"."+k, nsLabels[k]))
	}
	ls = ls.With(policyapi.NamedPortsIdentityLabels(ep.ports)...)
	return ls.With(
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, ep.spec.Namespace),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, ep.cluster),
	)
}

// distill computes the map state of every local endpoint, as the agent
// does once all identities are known.
func (sim *Simulation) distill() {
	for _, ep := range sim.endpoints {
		if !ep.local(sim.scenario.Cluster) {
			continue
		}
		sp := sim.repo.Resolve(sim.epIdent[ep])
		epPolicy := sp.DistillPolicy(ep.ports)
		sim.mapStates[ep] = epPolicy.MapState()
		sim.defaultDeny[ep] = [2]bool{sp.DefaultDeny(policy.Ingress), sp.DefaultDeny(policy.Egress)}
		epPolicy.Detach()
	}
}

// Warnings returns the warnings of the scenario's policies (accepted
// oddities such as a top-level description, api.Warning), one line each.
func (sim *Simulation) Warnings() []string { return sim.warnings }

// Rules returns the rules in force in the simulation.
func (sim *Simulation) Rules() []*policyapi.Rule { return sim.repo.Rules() }

// peer is one side of a query: an endpoint, or an address that is none.
type peer struct {
	ep    *endpoint
	ip    netip.Addr
	ident *identity.Identity
}

// resolve returns the peer a query names, or an error saying why not.
func (sim *Simulation) resolve(ref string) (peer, error) {
	if ip, err := netip.ParseAddr(ref); err == nil {
		ip = ip.Unmap()
		if ep := sim.byIP[ip]; ep != nil {
			return peer{ep: ep, ip: ip, ident: sim.epIdent[ep]}, nil
		}
		return peer{ip: ip, ident: sim.hostIdents[ip]}, nil
	}
	key, parts := ref, strings.Split(ref, "/")
	switch {
	case len(parts) == 3 && parts[0] == sim.scenario.Cluster:
		key = parts[1] + "/" + parts[2]
	case len(parts) != 2 && len(parts) != 3:
		return peer{}, fmt.Errorf("%q is not ns/name, cluster/ns/name or an IP address", ref)
	}
	ep := sim.byRef[key]
	if ep == nil {
		return peer{}, fmt.Errorf("%q is no endpoint of the scenario", ref)
	}
	return peer{ep: ep, ident: sim.epIdent[ep]}, nil
}
