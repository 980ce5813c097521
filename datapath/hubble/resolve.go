package hubble

import (
	"net/netip"
	"slices"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
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
