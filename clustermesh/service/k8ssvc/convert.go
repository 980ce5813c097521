package k8ssvc

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// The annotations of a global service (Cilium's, with their old names);
// svcmanager reads them too.
const (
	AnnotationGlobal    = svcmanager.AnnotationGlobal
	AnnotationGlobalOld = svcmanager.AnnotationGlobalOld
	AnnotationShared    = svcmanager.AnnotationShared
	AnnotationSharedOld = svcmanager.AnnotationSharedOld
)

// IsGlobal reports whether svc is a global service.
func IsGlobal(svc *corev1.Service) bool { return svcmanager.IsGlobal(svc) }

// IsShared reports whether svc is global and shares its local backends:
// by default; when the shared annotation is set, only if it is "true".
func IsShared(svc *corev1.Service) bool { return svcmanager.IsShared(svc) }

// Convert returns the ClusterService of svc in cluster, with the
// backends of its endpoint slices.
func Convert(svc *corev1.Service, slices []*discoveryv1.EndpointSlice, cluster cluster.Info) *service.ClusterService {
	cs := &service.ClusterService{
		Cluster: cluster.ClusterName, ClusterID: cluster.ClusterID,
		Namespace: svc.Namespace, Name: svc.Name,
		Frontends: map[string]service.PortConfiguration{}, Backends: map[string]service.PortConfiguration{},
		Labels: svc.Labels, Selector: svc.Spec.Selector,
		IncludeExternal: IsGlobal(svc), Shared: IsShared(svc),
	}
	ips := svc.Spec.ClusterIPs
	if len(ips) == 0 && svc.Spec.ClusterIP != "" {
		ips = []string{svc.Spec.ClusterIP}
	}
	for _, s := range ips {
		ip, err := netip.ParseAddr(s) // "None" (headless) is no frontend
		if err != nil {
			continue
		}
		ports := service.PortConfiguration{}
		for _, p := range svc.Spec.Ports {
			ports[p.Name] = &service.L4Addr{Protocol: protocol(p.Protocol), Port: uint16(p.Port)}
		}
		cs.Frontends[ip.String()] = ports
	}
	for _, sl := range slices {
		addBackends(cs.Backends, sl)
	}
	return cs
}

// addBackends adds the ready endpoints of sl with its ports.
func addBackends(into map[string]service.PortConfiguration, sl *discoveryv1.EndpointSlice) {
	ports := service.PortConfiguration{}
	for _, p := range sl.Ports {
		if p.Port == nil { // all ports: nothing a frontend port maps to
			continue
		}
		var name string
		if p.Name != nil {
			name = *p.Name
		}
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		ports[name] = &service.L4Addr{Protocol: protocol(proto), Port: uint16(*p.Port)}
	}
	if len(ports) == 0 {
		return
	}
	for _, ep := range sl.Endpoints {
		if ep.Conditions.Ready != nil && !*ep.Conditions.Ready {
			continue
		}
		for _, a := range ep.Addresses {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				continue
			}
			pc := into[ip.String()]
			if pc == nil {
				pc = service.PortConfiguration{}
				into[ip.String()] = pc
			}
			for name, l4 := range ports {
				pc[name] = &service.L4Addr{Protocol: l4.Protocol, Port: l4.Port}
			}
		}
	}
}

// protocol is the L4Addr protocol of a Kubernetes one (TCP by default).
func protocol(p corev1.Protocol) string {
	if p == "" {
		return string(corev1.ProtocolTCP)
	}
	return string(p)
}
