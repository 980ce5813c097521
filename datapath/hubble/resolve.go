package hubble

import (
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// EndpointInfo is what is known about one end of a flow besides its
// identity.
type EndpointInfo struct {
	// EndpointID is the local endpoint's id (0 for a remote one).
	EndpointID uint32
	// Namespace and PodName name the pod (empty when not a pod).
	Namespace, PodName string
	// Workloads are the pod's controllers (a Deployment, ...).
	Workloads []Workload
}

// Workload is a controller of a pod.
type Workload struct {
	Kind, Name string
}

// Endpoints looks addresses up: the endpoint manager for local endpoints,
// the ipcache for remote ones (pod names are published with them).
type Endpoints interface {
	LookupIP(ip netip.Addr) (EndpointInfo, bool)
}

// Services names the service of a frontend (the service manager).
type Services interface {
	ServiceAt(addr datapath.L3n4Addr) (namespace, name string, ok bool)
}

// RevNATs finds the frontend of a service by its rev-NAT index (the
// load-balancing maps), which the datapath's events of translated
// packets carry.
type RevNATs interface {
	RevNATFrontend(idx uint16, v4 bool) (netip.AddrPort, bool)
}

// services names the services of ev's ends: an end that is a frontend
// (as Cilium's Hubble does), and the service a translated packet was
// balanced through, which the datapath names (its destination, or the
// source of a reply), though its addresses are the backend's.
func (p *Parser) services(ev monitor.Event) (src, dst *flow.Service) {
	src, dst = p.service(ev.Src, ev.Proto), p.service(ev.Dst, ev.Proto)
	if ev.RevNAT == 0 || p.RevNATs == nil || (ev.ServiceIsSource && src != nil) || (!ev.ServiceIsSource && dst != nil) {
		return src, dst
	}
	fe, ok := p.RevNATs.RevNATFrontend(ev.RevNAT, ev.Src.Addr().Is4())
	if !ok {
		return src, dst
	}
	if ev.ServiceIsSource {
		return p.service(fe, ev.Proto), dst
	}
	return src, p.service(fe, ev.Proto)
}

// service returns the service whose frontend is ap, as Cilium's Hubble
// names it: a frontend of the flow's protocol, else of TCP, else of UDP
// (an ICMP error to a frontend names its service too); nil when none.
func (p *Parser) service(ap netip.AddrPort, proto policy.Proto) *flow.Service {
	if p.Services == nil || !ap.Addr().IsValid() || ap.Port() == 0 {
		return nil
	}
	first := datapath.ProtoTCP
	if proto == policy.ProtoSCTP || proto == policy.ProtoUDP {
		first = uint8(proto)
	}
	for i, pr := range [...]uint8{first, datapath.ProtoTCP, datapath.ProtoUDP} {
		if i > 0 && pr == first { // TCP (or UDP) was the first: looked up once
			continue
		}
		addr := datapath.L3n4Addr{Addr: ap.Addr().Unmap(), Port: ap.Port(), Proto: pr, Scope: datapath.ScopeExternal}
		if ns, name, ok := p.Services.ServiceAt(addr); ok {
			return &flow.Service{Namespace: ns, Name: name}
		}
	}
	return nil
}

// Identities looks identities up by number (the identity cache).
type Identities interface {
	LookupIdentityByID(id identity.NumericIdentity) *identity.Identity
}

// endpoint builds one end of a flow: the datapath's identity, the labels
// of that identity (lbls, or looked up), and what eps knows of ip.
func (p *Parser) endpoint(ip netip.Addr, id identity.NumericIdentity, lbls labels.Labels) *flow.Endpoint {
	if lbls == nil && p.Identities != nil {
		if i := p.Identities.LookupIdentityByID(id); i != nil {
			lbls = i.Labels
		}
	}
	ep := &flow.Endpoint{Identity: uint32(id), Labels: labelStrings(lbls)}
	if l, ok := lbls.Get(labels.KeyPolicyCluster); ok {
		ep.ClusterName = l.Value
	}
	if l, ok := lbls.Get(labels.KeyPodNamespace); ok {
		ep.Namespace = l.Value
	}
	if ip.IsValid() && p.Endpoints != nil {
		if info, ok := p.Endpoints.LookupIP(ip); ok {
			ep.ID = info.EndpointID
			ep.PodName = info.PodName
			if info.Namespace != "" {
				ep.Namespace = info.Namespace
			}
			for _, w := range info.Workloads {
				ep.Workloads = append(ep.Workloads, &flow.Workload{Kind: w.Kind, Name: w.Name})
			}
		}
	}
	if ep.ClusterName == "" && ep.PodName != "" {
		ep.ClusterName = p.ClusterName
	}
	return ep
}

// labelStrings formats labels as Hubble does: "source:key=value", sorted.
func labelStrings(ls labels.Labels) []string {
	if len(ls) == 0 {
		return nil
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.String())
	}
	slices.Sort(out)
	return out
}
