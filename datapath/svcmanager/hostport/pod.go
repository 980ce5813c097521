// Package hostport balances the hostPorts of this node's pods
// (spec.containers[].ports[].hostPort), as Cilium's kube-proxy
// replacement does in place of the CNI portmap plugin: each pod with
// host ports becomes a service of the manager's SourceHostPort, whose
// HostPort frontends (the port's hostIP, or every node address) balance
// to that pod's containerPort. The NodePort programs translate traffic
// from outside, the endpoint programs and the socket LB traffic from
// the node's pods and processes.
//
// It may import packages of cells, kvstore, policy and datapath
// (docs/design.md, Layers).
package hostport

import (
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// FromPod returns the service of pod's host ports on node, nil when it
// has none to balance: no host port, the host's network namespace (its
// ports are the node's already), no address yet, or finished. Each
// mapping gets a port name of its own ("<hostPort>/<protocol number>"), so a
// frontend takes its containerPort only. A hostIP of the other family
// than a pod address, or one that does not parse, is named in Warnings
// and left out.
func FromPod(pod *corev1.Pod, node string) *svcmanager.Service {
	if pod.Spec.HostNetwork || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed ||
		pod.DeletionTimestamp != nil {
		return nil
	}
	var addrs []netip.Addr
	for _, ip := range pod.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			addrs = append(addrs, a.Unmap())
		}
	}
	if len(addrs) == 0 {
		if a, err := netip.ParseAddr(pod.Status.PodIP); err == nil {
			addrs = append(addrs, a.Unmap())
		}
	}
	if len(addrs) == 0 {
		return nil
	}
	svc := &svcmanager.Service{Namespace: pod.Namespace, Name: pod.Name}
	for ci, c := range pod.Spec.Containers {
		for pi, p := range c.Ports {
			if p.HostPort <= 0 || p.HostPort > 65535 || p.ContainerPort <= 0 || p.ContainerPort > 65535 {
				continue
			}
			proto := svcmanager.Protocol(p.Protocol)
			name := fmt.Sprintf("%d/%d", p.HostPort, proto)
			var host netip.Addr
			if p.HostIP != "" {
				a, err := netip.ParseAddr(p.HostIP)
				if err != nil {
					svc.Warnings = append(svc.Warnings, fmt.Sprintf("spec.containers[%d].ports[%d].hostIP: %q is not an IP address", ci, pi, p.HostIP))
					continue
				}
				if !a.IsUnspecified() {
					host = a.Unmap()
				}
			}
			matched := false
			for _, a := range addrs {
				if host.IsValid() && host.Is4() != a.Is4() {
					continue
				}
				matched = true
				fe := host
				if !fe.IsValid() {
					fe = netip.IPv6Unspecified()
					if a.Is4() {
						fe = netip.IPv4Unspecified()
					}
				}
				svc.Frontends = append(svc.Frontends, svcmanager.Frontend{
					Addr: datapath.L3n4Addr{Addr: fe, Port: uint16(p.HostPort), Proto: proto}, Type: datapath.SVCTypeHostPort, PortName: name})
				svc.Backends = append(svc.Backends, svcmanager.Backend{
					Addr: datapath.L3n4Addr{Addr: a, Port: uint16(p.ContainerPort), Proto: proto}, PortNames: []string{name},
					NodeName: node, Condition: svcmanager.Ready})
			}
			if !matched {
				svc.Warnings = append(svc.Warnings, fmt.Sprintf("spec.containers[%d].ports[%d].hostIP: %s is of no family of the pod's addresses", ci, pi, host))
			}
		}
	}
	if len(svc.Frontends) == 0 && len(svc.Warnings) == 0 {
		return nil
	}
	return svc
}
