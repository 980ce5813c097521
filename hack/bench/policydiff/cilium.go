package policydiff

import (
	"fmt"
	"net/netip"

	"github.com/cilium/cilium/pkg/identity"
	"github.com/cilium/cilium/pkg/k8s"
	k8sconst "github.com/cilium/cilium/pkg/k8s/apis/cilium.io"
	"github.com/cilium/cilium/pkg/labels"
	"github.com/cilium/cilium/pkg/policy"
	ciliumtypes "github.com/cilium/cilium/pkg/types"
	"github.com/cilium/cilium/pkg/u8proto"

	"github.com/apiary-net/apiary/hack/bench/ciliumpolicy"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// ciliumRun is a scenario loaded into Cilium's engine.
type ciliumRun struct {
	c        *Case
	e        *ciliumpolicy.Engine
	idents   map[string]*identity.Identity // by sorted labels
	byRef    map[string]*identity.Identity // endpoints by query reference
	byIP     map[netip.Addr]*identity.Identity
	refByIP  map[netip.Addr]string             // endpoints' references by address
	epp      map[string]*policy.EndpointPolicy // local endpoints by reference
	sps      map[identity.NumericIdentity]policy.SelectorPolicy
	ids      identity.IdentityMap // every identity, for the peer selector cache
	nextID   identity.NumericIdentity
	nextCIDR identity.NumericIdentity
}

// RunCilium runs c through Cilium's engine, as a Cilium agent of
// LocalCluster would see the scenario, and returns the verdicts of its
// queries, in order:
//
//   - pods get global identities with the labels Cilium's agent gives
//     them: k8s:<pod labels>, the namespace, the namespace's labels
//     under io.cilium.k8s.namespace.labels, the cluster and, for pods
//     with named ports, the generated io.cilium.k8s.named-ports (same
//     labels, same identity; a remote cluster's ids carry its cluster id
//     as Cilium's do);
//   - the prefixes of the policies' CIDR peers and the /32 of every
//     query address that is no pod get local CIDR identities with
//     labels.GetCIDRLabels, as the ipcache allocates them;
//   - the named ports of the pods go into the named port map the
//     ipcache keeps (egress named ports) and to each endpoint (ingress
//     named ports);
//   - each local pod is an endpoint with the selector policy of its
//     identity distilled for it; a query's direction is decided by
//     EndpointPolicy.Lookup on the source's egress and the
//     destination's ingress.
func RunCilium(c *Case) ([]Verdicts, error) {
	r := &ciliumRun{
		c: c, e: ciliumpolicy.New(LocalCluster),
		idents: map[string]*identity.Identity{}, byRef: map[string]*identity.Identity{},
		byIP: map[netip.Addr]*identity.Identity{}, refByIP: map[netip.Addr]string{}, epp: map[string]*policy.EndpointPolicy{},
		sps: map[identity.NumericIdentity]policy.SelectorPolicy{},
		ids: identity.IdentityMap{}, nextID: identity.MinimalNumericIdentity,
		nextCIDR: identity.MinLocalIdentity,
	}
	r.e.UpdateIdentities(nil, aggregateIdentities())
	parser := ciliumpolicy.Parser{Log: r.e.Log, ClusterForPolicies: LocalCluster}
	if c.Scenario.PolicyDefaultLocalCluster != nil && !*c.Scenario.PolicyDefaultLocalCluster {
		parser.ClusterForPolicies = ""
	}
	var resources []ciliumpolicy.Resource
	for i, doc := range c.Policies {
		res, err := parser.Parse([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("policies[%d]: %w", i, err)
		}
		resources = append(resources, res)
	}
	if err := r.identities(resources); err != nil {
		return nil, err
	}
	for _, res := range resources {
		r.e.Insert(res)
	}
	if err := r.endpoints(); err != nil {
		return nil, err
	}
	defer r.detach()
	out := make([]Verdicts, len(c.Scenario.Queries))
	for i, q := range c.Scenario.Queries {
		v, err := r.query(q)
		if err != nil {
			return nil, fmt.Errorf("queries[%d]: %w", i, err)
		}
		out[i] = v
	}
	return out, nil
}

// aggregateIdentities returns Cilium 1.20's reserved aggregate
// identities (aggregate-cluster, -cluster-mesh, -world, -remote-node).
// The test takes them out of Cilium's selector cache: a selector with
// only negative requirements (NotIn, DoesNotExist) selects them, and the
// datapath lookup then lets every identity of the aggregate through,
// which Cilium's own issue cilium/cilium#46949 calls a bug (a
// NetworkPolicy namespaceSelector "env NotIn [prod]" with
// --policy-default-local-cluster=false allows all pods of the cluster).
// Entities and wildcards still use the aggregates (Cilium inserts them
// without the selector cache), so nothing else changes.
// docs/policy.md, "Differences from Cilium".
func aggregateIdentities() identity.IdentityMap {
	out := identity.IdentityMap{}
	for id, ls := range identity.ListReservedIdentities() {
		switch id {
		case identity.ReservedIdentityAggregateCluster, identity.ReservedIdentityAggregateClusterMesh,
			identity.ReservedIdentityAggregateWorld, identity.ReservedIdentityAggregateRemoteNode:
			out[id] = ls
		}
	}
	return out
}

// identities allocates the identities of the pods, of the policies'
// prefixes and of the query addresses, and tells the selector caches.
func (r *ciliumRun) identities(resources []ciliumpolicy.Resource) error {
	s := &r.c.Scenario
	for _, ep := range s.Endpoints {
		cluster := ep.Cluster
		if cluster == "" {
			cluster = s.Cluster
		}
		ref := ep.Namespace + "/" + ep.Name
		if cluster != s.Cluster {
			ref = cluster + "/" + ref
		}
		ports := ciliumtypes.NamedPortMap{}
		for _, p := range ep.Ports {
			if err := ports.AddPort(p.Name, p.Port, p.Protocol); err != nil {
				return fmt.Errorf("endpoint %s: %w", ref, err)
			}
		}
		ls := r.podLabels(ep, cluster)
		// Cilium 1.20's agent gives a new pod with named ports the
		// generated label io.cilium.k8s.named-ports listing them, so
		// that pods of one label set numbering a name differently get
		// different identities.
		for _, l := range k8s.NamedPortsIdentityLabels(ports) {
			ls[l.Key] = l
		}
		id := r.allocate(ls, cluster != s.Cluster)
		r.byRef[ref] = id
		for _, ip := range ep.IPs {
			r.byIP[netip.MustParseAddr(ip)] = id
			r.refByIP[netip.MustParseAddr(ip)] = ref
		}
		if len(ports) > 0 {
			r.e.SetNamedPorts(id.ID, ports)
		}
	}
	for _, res := range resources {
		for _, prefix := range policy.GetCIDRPrefixes(res.Entries) {
			r.allocate(labels.GetCIDRLabels(prefix), false)
		}
	}
	for _, q := range s.Queries {
		for _, ref := range []string{q.From, q.To} {
			if ip, err := netip.ParseAddr(ref); err == nil && r.byIP[ip] == nil {
				r.allocate(labels.GetCIDRLabels(netip.PrefixFrom(ip, ip.BitLen())), false)
			}
		}
	}
	r.e.UpdateIdentities(r.ids, nil)
	return nil
}

// podLabels returns the identity labels Cilium gives a pod of ep's
// namespace in cluster.
func (r *ciliumRun) podLabels(ep simulate.Endpoint, cluster string) labels.Labels {
	ls := labels.Map2Labels(ep.Labels, labels.LabelSourceK8s)
	for k, v := range r.c.NamespaceLabels(ep.Namespace) {
		l := labels.NewLabel(k8sconst.PodNamespaceMetaLabelsPrefix+k, v, labels.LabelSourceK8s)
		ls[l.Key] = l
	}
	for k, v := range map[string]string{k8sconst.PodNamespaceLabel: ep.Namespace, k8sconst.PolicyLabelCluster: cluster} {
		l := labels.NewLabel(k, v, labels.LabelSourceK8s)
		ls[l.Key] = l
	}
	return ls
}

// remoteClusterID is the cluster id of RemoteCluster, which Cilium puts
// in bits 16-23 of that cluster's identities.
const remoteClusterID = 2

// allocate returns the identity of ls, allocating it the first time: a
// local CIDR identity for CIDR labels, else a global one, of the remote
// cluster when remote.
func (r *ciliumRun) allocate(ls labels.Labels, remote bool) *identity.Identity {
	key := ls.String()
	if id, ok := r.idents[key]; ok {
		return id
	}
	var nid identity.NumericIdentity
	switch {
	case ls.HasWorldLabel():
		nid, r.nextCIDR = r.nextCIDR, r.nextCIDR+1
	case remote:
		nid = r.nextID | remoteClusterID<<16
		r.nextID++
	default:
		nid, r.nextID = r.nextID, r.nextID+1
	}
	id := identity.NewIdentity(nid, ls)
	r.idents[key] = id
	r.ids[nid] = id.LabelArray
	return id
}

// endpoints resolves each local pod's identity and distills a policy
// for each local pod with its named ports.
func (r *ciliumRun) endpoints() error {
	s := &r.c.Scenario
	for i, ep := range s.Endpoints {
		if ep.Cluster != "" && ep.Cluster != s.Cluster {
			continue
		}
		ref := ep.Namespace + "/" + ep.Name
		id := r.byRef[ref]
		sp, ok := r.sps[id.ID]
		if !ok {
			r.e.AddLocalIdentity(id)
			var err error
			if sp, err = r.e.Resolve(id); err != nil {
				return err
			}
			r.sps[id.ID] = sp
		}
		owner := &ciliumpolicy.Endpoint{ID: uint64(i + 1), Ports: ciliumtypes.NamedPortMap{}}
		for _, p := range ep.Ports {
			if err := owner.Ports.AddPort(p.Name, p.Port, p.Protocol); err != nil {
				return fmt.Errorf("endpoint %s: %w", ref, err)
			}
		}
		r.epp[ref] = r.e.Distill(sp, owner)
	}
	return nil
}

func (r *ciliumRun) detach() {
	for _, epp := range r.epp {
		epp.Detach(r.e.Log)
	}
	for _, sp := range r.sps {
		sp.Detach()
	}
}

var protos = map[string]u8proto.U8proto{"": u8proto.TCP, "TCP": u8proto.TCP, "UDP": u8proto.UDP, "SCTP": u8proto.SCTP,
	"ICMP": u8proto.ICMP, "ICMPv6": u8proto.ICMPv6}

// query decides both directions of q: for ICMP and ICMPv6 the type
// stands in the port, as in Cilium's policy map keys.
func (r *ciliumRun) query(q simulate.Query) (Verdicts, error) {
	src, srcEP, err := r.peer(q.From)
	if err != nil {
		return Verdicts{}, err
	}
	dst, dstEP, err := r.peer(q.To)
	if err != nil {
		return Verdicts{}, err
	}
	proto, ok := protos[q.Protocol]
	if !ok {
		return Verdicts{}, fmt.Errorf("protocol %q is not generated", q.Protocol)
	}
	port := uint16(q.Port)
	if family, icmp := map[string]policyapi.ICMPFamily{"ICMP": policyapi.ICMPv4, "ICMPv6": policyapi.ICMPv6}[q.Protocol]; icmp {
		t, err := policyapi.ParseICMPType(family, q.Type)
		if err != nil {
			return Verdicts{}, fmt.Errorf("query type: %w", err)
		}
		port = uint16(t)
	}
	decide := func(epp *policy.EndpointPolicy, ingress bool, peer identity.NumericIdentity) Decision {
		switch {
		case epp == nil:
			return NoSubject
		case ciliumpolicy.Allowed(epp, ingress, peer, proto, port):
			return Allowed
		}
		return Denied
	}
	return Verdicts{Egress: decide(srcEP, false, dst.ID), Ingress: decide(dstEP, true, src.ID)}, nil
}

// peer returns the identity of a query side (an endpoint by reference
// or address, or an address that is no endpoint) and its endpoint policy
// if it is a local endpoint.
func (r *ciliumRun) peer(ref string) (*identity.Identity, *policy.EndpointPolicy, error) {
	if ip, err := netip.ParseAddr(ref); err == nil {
		if ep, ok := r.refByIP[ip]; ok {
			ref = ep
		} else {
			return r.idents[labels.GetCIDRLabels(netip.PrefixFrom(ip, ip.BitLen())).String()], nil, nil
		}
	}
	id := r.byRef[ref]
	if id == nil {
		return nil, nil, fmt.Errorf("no endpoint %q", ref)
	}
	return id, r.epp[ref], nil
}
