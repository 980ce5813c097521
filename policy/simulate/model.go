package simulate

import (
	"maps"
	"net/netip"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// The model is the simulation's resolved state, for a datapath that
// answers the same queries by other means (datapath/bpfsim runs them
// through the BPF programs): the endpoints with their identities,
// addresses and map states, the prefixes the ipcache would hold, and
// each query resolved to its two sides.

// EndpointModel is one endpoint of the scenario as the agent would see
// it.
type EndpointModel struct {
	// Ref is "ns/name" for the local cluster, else "cluster/ns/name".
	Ref string
	// Local is true for an endpoint of the simulated cluster: only
	// those have a policy (a map state and programs).
	Local    bool
	Identity identity.NumericIdentity
	IPs      []netip.Addr
	// MapState is the endpoint's distilled map state (nil unless
	// Local).
	MapState policy.MapState
	// DefaultDeny is, by policy.Direction, whether a rule selecting the
	// endpoint isolates it in that direction (what the agent turns
	// enforcement on with).
	DefaultDeny [2]bool
}

// SideModel is one side of a query.
type SideModel struct {
	// Endpoint is the endpoint the side names (by reference or by one
	// of its addresses), nil for an address that is no endpoint.
	Endpoint *EndpointModel
	// IP is the address the query names, invalid when it names an
	// endpoint by reference.
	IP       netip.Addr
	Identity identity.NumericIdentity
}

// QueryModel is one validated query resolved to its sides.
type QueryModel struct {
	Query    Query
	From, To SideModel
	Protocol policyapi.Protocol
	// Port is the destination port, or for ICMP and ICMPv6 the message
	// type.
	Port uint16
	// Self is true when both sides are the same endpoint: the traffic
	// never leaves the pod.
	Self bool
}

// Model is the resolved state of a simulation.
type Model struct {
	// Endpoints in file order.
	Endpoints []*EndpointModel
	// Prefixes maps prefixes to identities for a datapath's ipcache:
	// each endpoint's addresses (/32, /128), the policies' CIDR prefixes
	// and the queries' addresses that are no endpoints but a policy
	// prefix covers, with the identity the engine gives them (that of
	// their /32 or /128). An
	// endpoint's address wins over an equal CIDR prefix, as the
	// ipcache's source precedence makes it. A /0 prefix has no entry,
	// nor has an address no other prefix covers: the engine gives such
	// an address world-ipv4 or world-ipv6, as the datapath does on an
	// ipcache miss, and a /0 selects exactly that identity.
	Prefixes map[netip.Prefix]identity.NumericIdentity
	Queries  []QueryModel
}

// Model returns the simulation's resolved state. It shares nothing with
// the simulation: the caller may keep or change it.
func (sim *Simulation) Model() *Model {
	m := &Model{Prefixes: map[netip.Prefix]identity.NumericIdentity{}}
	for _, prefix := range sim.repo.CIDRPrefixes() {
		if prefix.Bits() == 0 {
			continue // a miss: world-ipv4 or world-ipv6, which the /0 selects
		}
		m.Prefixes[prefix.Masked()] = sim.idents[identity.CIDRLabels(prefix).SortedList()].ID
	}
	for ip, id := range sim.hostIdents {
		if id.ID.IsReserved() {
			continue // world-ipv4/world-ipv6: no ipcache entry, as in the agent
		}
		m.Prefixes[netip.PrefixFrom(ip, ip.BitLen())] = id.ID
	}
	byEP := make(map[*endpoint]*EndpointModel, len(sim.endpoints))
	for _, ep := range sim.endpoints {
		em := &EndpointModel{
			Ref: ep.ref, Local: ep.local(sim.scenario.Cluster), Identity: sim.epIdent[ep].ID,
			IPs: append([]netip.Addr(nil), ep.ips...), DefaultDeny: sim.defaultDeny[ep],
		}
		if ms := sim.mapStates[ep]; ms != nil {
			em.MapState = maps.Clone(ms)
		}
		for _, ip := range ep.ips {
			m.Prefixes[netip.PrefixFrom(ip, ip.BitLen())] = em.Identity
		}
		byEP[ep] = em
		m.Endpoints = append(m.Endpoints, em)
	}
	for _, q := range sim.scenario.Queries {
		proto, port, _ := queryTraffic(q)
		src, _ := sim.resolve(q.From)
		dst, _ := sim.resolve(q.To)
		m.Queries = append(m.Queries, QueryModel{
			Query: q, Protocol: proto, Port: port,
			From: SideModel{Endpoint: byEP[src.ep], IP: src.ip, Identity: src.ident.ID},
			To:   SideModel{Endpoint: byEP[dst.ep], IP: dst.ip, Identity: dst.ident.ID},
			Self: src.ep != nil && src.ep == dst.ep,
		})
	}
	return m
}

// NewResult returns the result line of query q with verdict (Allowed
// when both directions allow), for a datapath that decides the
// directions itself; egress and ingress are set when explain is.
func NewResult(q QueryModel, egress, ingress Decision, explain bool) Result {
	r := Result{From: q.Query.From, To: q.Query.To, Port: q.Port, Protocol: string(q.Protocol), Verdict: Denied}
	if _, ok := q.Protocol.ICMPFamily(); ok {
		t := uint8(q.Port)
		r.ICMPType = &t
	}
	if egress.Verdict == Allowed && ingress.Verdict == Allowed {
		r.Verdict = Allowed
	}
	if explain {
		r.Egress, r.Ingress = &egress, &ingress
	}
	return r
}
