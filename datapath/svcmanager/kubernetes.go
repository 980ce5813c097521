package svcmanager

import (
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath"
)

// The annotations of a global service (Cilium's, with their old names).
const (
	AnnotationGlobal      = "service.cilium.io/global"
	AnnotationGlobalOld   = "io.cilium/global-service"
	AnnotationShared      = "service.cilium.io/shared"
	AnnotationSharedOld   = "io.cilium/shared-service"
	AnnotationAffinity    = "service.cilium.io/affinity"
	AnnotationAffinityOld = "io.cilium/service-affinity"
)

// defaultAffinityTimeout is Kubernetes' default ClientIP affinity timeout
// (3 hours).
const defaultAffinityTimeout = 10800 * time.Second

// annotation returns the first of names set on svc.
func annotation(svc *corev1.Service, names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := svc.Annotations[n]; ok {
			return v, true
		}
	}
	return "", false
}

// IsGlobal reports whether svc is a global service.
func IsGlobal(svc *corev1.Service) bool {
	v, _ := annotation(svc, AnnotationGlobal, AnnotationGlobalOld)
	return strings.EqualFold(v, "true")
}

// IsShared reports whether svc is global and shares its local backends:
// by default; when the shared annotation is set, only if it is "true".
func IsShared(svc *corev1.Service) bool {
	if !IsGlobal(svc) {
		return false
	}
	if v, ok := annotation(svc, AnnotationShared, AnnotationSharedOld); ok {
		return strings.EqualFold(v, "true")
	}
	return true
}

// ServiceAffinity returns the affinity of a global service (none for
// any other), and an error naming the annotation when its value is not
// local, remote or none (the affinity is then none, as in Cilium).
func ServiceAffinity(svc *corev1.Service) (Affinity, error) {
	if !IsGlobal(svc) {
		return AffinityNone, nil
	}
	v, _ := annotation(svc, AnnotationAffinity, AnnotationAffinityOld)
	switch strings.ToLower(v) {
	case "", "none":
		return AffinityNone, nil
	case "local":
		return AffinityLocal, nil
	case "remote":
		return AffinityRemote, nil
	}
	return AffinityNone, fmt.Errorf("annotation %s: %q is not local, remote or none; using none", AnnotationAffinity, v)
}

// FromKubernetes returns the Service of a Kubernetes Service and its
// EndpointSlices (label kubernetes.io/service-name), or nil for a service
// the datapath does not balance (ExternalName). Headless services
// (clusterIP None or the headless label) have no frontends.
// Unparsable addresses are skipped and named in Warnings (an
// unparsable loadBalancerSourceRanges entry closes the LoadBalancer
// frontends instead: sourceRanges). A watcher keeps a Converter, which
// does the same and parses each object once.
func FromKubernetes(svc *corev1.Service, eps []*discoveryv1.EndpointSlice) *Service {
	return NewConverter().Convert(svc, eps)
}

// serviceOf sets *s to the Service of svc without backends, its
// frontends appended to room[:0]; false: not balanced.
func serviceOf(svc *corev1.Service, s *Service, room []Frontend) bool {
	if svc.Spec.Type == corev1.ServiceTypeExternalName {
		return false
	}
	*s = Service{Namespace: svc.Namespace, Name: svc.Name,
		ExtLocal: svc.Spec.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyLocal,
		IntLocal: svc.Spec.InternalTrafficPolicy != nil && *svc.Spec.InternalTrafficPolicy == corev1.ServiceInternalTrafficPolicyLocal,
		Global:   IsGlobal(svc), Shared: IsShared(svc),
	}
	var err error
	if s.Affinity, err = ServiceAffinity(svc); err != nil {
		s.Warnings = append(s.Warnings, err.Error())
	}
	if svc.Spec.SessionAffinity == corev1.ServiceAffinityClientIP {
		s.SessionAffinityTimeout = defaultAffinityTimeout
		if c := svc.Spec.SessionAffinityConfig; c != nil && c.ClientIP != nil && c.ClientIP.TimeoutSeconds != nil && *c.ClientIP.TimeoutSeconds > 0 {
			s.SessionAffinityTimeout = time.Duration(*c.ClientIP.TimeoutSeconds) * time.Second
		}
	}
	// Kubernetes' headless label, as kube-proxy and Cilium read it (the
	// agent's watch leaves such Services out; a library user may not).
	if _, headless := svc.Labels[corev1.IsHeadlessService]; !headless {
		s.Frontends = slices.Clip(frontends(svc, &s.Warnings, room[:0])) // an append by a caller copies
	}
	s.SourceRanges = sourceRanges(svc, &s.Warnings)
	if p := svc.Spec.HealthCheckNodePort; svc.Spec.Type == corev1.ServiceTypeLoadBalancer && s.ExtLocal && p > 0 && p <= 65535 {
		s.HealthCheckNodePort = uint16(p)
	}
	return true
}

// frontends appends to out the ClusterIPs, NodePorts, external IPs and
// LoadBalancer ingress IPs of svc, each with every port.
func frontends(svc *corev1.Service, warnings *[]string, out []Frontend) []Frontend {
	add := func(field string, i int, ip string, t datapath.ServiceType) {
		a, err := parseAddr(ip)
		if err != nil || a.IsUnspecified() {
			*warnings = append(*warnings, fmt.Sprintf("%s[%d]: %q %s", field, i, ip, unusable(err)))
			return
		}
		for _, p := range svc.Spec.Ports {
			out = append(out, Frontend{Addr: datapath.L3n4Addr{Addr: a.Unmap(), Port: uint16(p.Port), Proto: Protocol(p.Protocol)},
				Type: t, PortName: p.Name})
		}
	}
	clusterIPs := svc.Spec.ClusterIPs
	if len(clusterIPs) == 0 && svc.Spec.ClusterIP != "" {
		clusterIPs = []string{svc.Spec.ClusterIP}
	}
	for i, ip := range clusterIPs {
		if ip != corev1.ClusterIPNone && ip != "" {
			add("spec.clusterIPs", i, ip, datapath.SVCTypeClusterIP)
		}
	}
	if svc.Spec.Type == corev1.ServiceTypeNodePort || svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for _, is4 := range families(svc, clusterIPs) {
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					out = append(out, Frontend{Addr: datapath.L3n4Addr{Addr: unspecified(is4), Port: uint16(p.NodePort), Proto: Protocol(p.Protocol)},
						Type: datapath.SVCTypeNodePort, PortName: p.Name})
				}
			}
		}
	}
	for i, ip := range svc.Spec.ExternalIPs {
		add("spec.externalIPs", i, ip, datapath.SVCTypeExternalIP)
	}
	if svc.Spec.Type == corev1.ServiceTypeLoadBalancer {
		for i, in := range svc.Status.LoadBalancer.Ingress {
			// Proxy mode (KEP-1860): the load balancer delivers to the
			// node, not to the VIP.
			if in.IP == "" || (in.IPMode != nil && *in.IPMode != corev1.LoadBalancerIPModeVIP) {
				continue
			}
			add("status.loadBalancer.ingress", i, in.IP, datapath.SVCTypeLoadBalancer)
		}
	}
	return out
}

// families are the IP families of svc (true: IPv4): spec.ipFamilies, or
// those of its ClusterIPs.
func families(svc *corev1.Service, clusterIPs []string) []bool {
	var out []bool
	for _, f := range svc.Spec.IPFamilies {
		out = append(out, f == corev1.IPv4Protocol)
	}
	if len(out) == 0 {
		for _, ip := range clusterIPs {
			if a, err := parseAddr(ip); err == nil {
				out = append(out, a.Unmap().Is4())
			}
		}
	}
	if len(out) == 2 && out[0] == out[1] {
		out = out[:1]
	}
	return out
}

// backends are the endpoints of sl with the slice's ports: ready ones,
// serving terminating ones and terminating ones (kept for their
// connections); endpoints neither ready nor terminating are left out, as
// kube-proxy does. A port without a number (all ports) serves nothing.
// names returns a shared one-name list for a port name, hints the shared
// topology hints of an endpoint (the Converter's), so that a slice
// allocates no list per port or endpoint. The backends are made in
// room(n), a room for n (reused: it held backends before, and what it
// held past the new ones is cleared).
func backends(sl *discoveryv1.EndpointSlice, warnings *[]string, names func(string) []string, hints func(*discoveryv1.EndpointHints) *Hints,
	room func(n int) (room []Backend, reused bool)) []Backend {
	if sl.AddressType != discoveryv1.AddressTypeIPv4 && sl.AddressType != discoveryv1.AddressTypeIPv6 {
		return nil
	}
	// The slice's ports, each with the service port names it serves
	// (shared by the backends: never changed after).
	type port struct {
		num   uint16
		proto uint8
		names []string
	}
	var buf [4]port
	ports := buf[:0]
	for i := range sl.Ports {
		p := &sl.Ports[i]
		if p.Port == nil {
			continue
		}
		proto := corev1.ProtocolTCP
		if p.Protocol != nil {
			proto = *p.Protocol
		}
		k := port{num: uint16(*p.Port), proto: Protocol(proto)}
		i := slices.IndexFunc(ports, func(x port) bool { return x.num == k.num && x.proto == k.proto })
		if i < 0 {
			ports = append(ports, k)
			i = len(ports) - 1
		}
		switch {
		case p.Name == nil || *p.Name == "":
		case len(ports[i].names) == 0:
			ports[i].names = names(*p.Name)[:1:1] // a second name copies it
		default:
			ports[i].names = append(ports[i].names, *p.Name)
		}
	}
	var out []Backend
	reused := false
	if n := len(sl.Endpoints) * len(ports); n > 0 { // none: nothing to make, no room taken
		out, reused = room(n)
		out = out[:0]
	}
	for i := range sl.Endpoints {
		ep := &sl.Endpoints[i]
		cond, ok := condition(&ep.Conditions)
		if !ok {
			continue
		}
		var node string
		if ep.NodeName != nil {
			node = *ep.NodeName
		}
		var hinted *Hints
		if ep.Hints != nil {
			hinted = hints(ep.Hints)
		}
		for j, addr := range ep.Addresses {
			a, err := parseAddr(addr)
			if err != nil || a.IsUnspecified() {
				*warnings = append(*warnings, fmt.Sprintf("EndpointSlice %s: endpoints[%d].addresses[%d]: %q %s", sl.Name, i, j, addr, unusable(err)))
				continue
			}
			for _, p := range ports {
				out = append(out, Backend{Addr: datapath.L3n4Addr{Addr: a.Unmap(), Port: p.num, Proto: p.proto},
					PortNames: p.names, NodeName: node, Hints: hinted, Condition: cond})
			}
		}
	}
	if len(out) == 0 {
		return nil // whether or not there was a room
	}
	if reused {
		clear(out[len(out):cap(out)]) // the room's old strings
	}
	return out
}

// unusable says why an address is left out: err from parsing it, or
// (nil) it is the unspecified address, which no frontend or backend has.
func unusable(err error) string {
	if err != nil {
		return "is not an IP address"
	}
	return "is the unspecified address"
}

// condition maps an endpoint's conditions (nil ready or serving: true,
// as the API says) to a Condition; false: leave the endpoint out.
func condition(c *discoveryv1.EndpointConditions) (Condition, bool) {
	ready := c.Ready == nil || *c.Ready
	serving := c.Serving == nil || *c.Serving
	terminating := c.Terminating != nil && *c.Terminating
	switch {
	case ready:
		return Ready, true
	case terminating && serving:
		return ServingTerminating, true
	case terminating:
		return Terminating, true
	}
	return 0, false
}

// Protocol is the IANA number of a Kubernetes protocol (TCP when empty).
func Protocol(p corev1.Protocol) uint8 {
	switch p {
	case corev1.ProtocolUDP:
		return datapath.ProtoUDP
	case corev1.ProtocolSCTP:
		return datapath.ProtoSCTP
	}
	return datapath.ProtoTCP
}
