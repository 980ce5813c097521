package simulate

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// endpoint is a validated scenario endpoint.
type endpoint struct {
	ref     string // "ns/name" in the local cluster, else "cluster/ns/name"
	cluster string
	spec    Endpoint
	ips     []netip.Addr
	ports   []policyapi.NamedPort
}

// local reports whether the endpoint belongs to the simulated cluster,
// whose policies apply to it.
func (e *endpoint) local(cluster string) bool { return e.cluster == cluster }

// validator collects the problems of one scenario file.
type validator struct {
	file string
	errs []error
	// warnings are the policies' warnings (api.Warning), formatted.
	warnings []string
}

func (v *validator) errorf(entry, format string, args ...any) {
	v.errs = append(v.errs, &ScenarioError{File: v.file, Entry: entry, Err: fmt.Errorf(format, args...)})
}

// check records errs as problems of entry.
func (v *validator) check(entry string, errs ...error) {
	for _, err := range errs {
		if err != nil {
			v.errs = append(v.errs, &ScenarioError{File: v.file, Entry: entry, Err: err})
		}
	}
}

func (v *validator) err() error { return errors.Join(v.errs...) }

// namespaces returns the namespaces by name.
func (v *validator) namespaces(s *Scenario) map[string]Namespace {
	out := make(map[string]Namespace, len(s.Namespaces))
	for i, ns := range s.Namespaces {
		entry := fmt.Sprintf("namespaces[%d]", i)
		if ns.Name == "" {
			v.errorf(entry, "name is required")
			continue
		}
		entry += " (" + ns.Name + ")"
		if _, dup := out[ns.Name]; dup {
			v.errorf(entry, "duplicate namespace")
			continue
		}
		v.check(entry, checkNames("", ns.Name))
		v.check(entry, checkLabels("labels", ns.Labels)...)
		out[ns.Name] = ns
	}
	return out
}

// endpoints returns the endpoints, with an index by reference and by IP
// address. An endpoint with a bad field is kept (Load fails anyway), so
// that later entries naming it are not reported too.
func (v *validator) endpoints(s *Scenario) (eps []*endpoint, byRef map[string]*endpoint, byIP map[netip.Addr]*endpoint) {
	byRef, byIP = map[string]*endpoint{}, map[netip.Addr]*endpoint{}
	for i, spec := range s.Endpoints {
		ep := &endpoint{cluster: spec.Cluster, spec: spec}
		if ep.cluster == "" {
			ep.cluster = s.Cluster
		}
		ep.ref = spec.Namespace + "/" + spec.Name
		if ep.cluster != s.Cluster {
			ep.ref = ep.cluster + "/" + ep.ref
		}
		entry := fmt.Sprintf("endpoints[%d] (%s)", i, ep.ref)
		if spec.Name == "" || spec.Namespace == "" {
			v.errorf(fmt.Sprintf("endpoints[%d]", i), "name and namespace are required")
			continue
		}
		if other, dup := byRef[ep.ref]; dup {
			v.errorf(entry, "duplicate endpoint: also endpoints[%d]", indexOf(eps, other))
			continue
		}
		v.check(entry, checkNames(spec.Cluster, spec.Namespace))
		v.check(entry, checkLabels("labels", spec.Labels)...)
		v.endpointIPs(entry, ep, byIP)
		v.endpointPorts(entry, ep)
		for _, ip := range ep.ips {
			byIP[ip] = ep
		}
		byRef[ep.ref] = ep
		eps = append(eps, ep)
	}
	return eps, byRef, byIP
}

func indexOf(eps []*endpoint, ep *endpoint) int {
	for i, e := range eps {
		if e == ep {
			return i
		}
	}
	return -1
}

func (v *validator) endpointIPs(entry string, ep *endpoint, byIP map[netip.Addr]*endpoint) {
	for j, s := range ep.spec.IPs {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			v.errorf(entry, "ips[%d]: %q is not an IP address", j, s)
			continue
		}
		ip = ip.Unmap()
		if other, dup := byIP[ip]; dup {
			v.errorf(entry, "ips[%d]: %s is also an address of %s", j, ip, other.ref)
			continue
		}
		ep.ips = append(ep.ips, ip)
	}
}

func (v *validator) endpointPorts(entry string, ep *endpoint) {
	for j, p := range ep.spec.Ports {
		field := fmt.Sprintf("ports[%d]", j)
		proto, err := parseProtocol(p.Protocol)
		nameProblem := policyapi.CheckPortName(p.Name)
		switch {
		case p.Name == "":
			v.errorf(entry, "%s: name is required", field)
		case nameProblem != "":
			v.errorf(entry, "%s: name %q %s", field, p.Name, nameProblem)
		case p.Port < 1 || p.Port > 65535:
			v.errorf(entry, "%s: port %d is not in 1-65535", field, p.Port)
		case err != nil:
			v.errorf(entry, "%s: %v", field, err)
		default:
			ep.ports = append(ep.ports, policyapi.NamedPort{Name: p.Name, Port: uint16(p.Port), Protocol: proto})
		}
	}
}

// parseQueryProtocol parses a query's protocol: a port's, or ICMP or
// ICMPv6 (any case).
func parseQueryProtocol(s string) (policyapi.Protocol, error) {
	switch strings.ToUpper(s) {
	case "ICMP":
		return policyapi.ProtoICMP, nil
	case "ICMPV6":
		return policyapi.ProtoICMPv6, nil
	}
	p, err := parseProtocol(s)
	if err != nil {
		return "", fmt.Errorf("protocol %q is not TCP, UDP, SCTP, ICMP or ICMPv6", s)
	}
	return p, nil
}

// parseProtocol parses a declared port's protocol; empty is TCP.
func parseProtocol(s string) (policyapi.Protocol, error) {
	switch p := policyapi.Protocol(strings.ToUpper(s)); p {
	case "":
		return policyapi.ProtoTCP, nil
	case policyapi.ProtoTCP, policyapi.ProtoUDP, policyapi.ProtoSCTP:
		return p, nil
	}
	return "", fmt.Errorf("protocol %q is not TCP, UDP or SCTP", s)
}

// policies parses every policy object with the scenario's cluster as the
// local cluster and its cluster defaulting, and rejects the same policy
// twice.
func (v *validator) policies(s *Scenario) []*policyapi.Policy {
	opts := policyapi.DefaultOptions()
	opts.ClusterName = s.Cluster
	opts.DefaultLocalCluster = s.PolicyDefaultLocalCluster == nil || *s.PolicyDefaultLocalCluster
	opts.Limits = s.Limits
	seen := map[string]int{}
	var out []*policyapi.Policy
	for i, raw := range s.Policies {
		entry := fmt.Sprintf("policies[%d]", i)
		doc, err := yaml.Marshal(&raw)
		if err != nil {
			v.errorf(entry, "encode: %v", err)
			continue
		}
		pols, err := policyapi.ParseDocuments(v.file+": "+entry, doc, opts)
		if err != nil {
			v.errs = append(v.errs, err)
			continue
		}
		for _, p := range pols {
			for _, w := range p.Warnings {
				v.warnings = append(v.warnings, w.String())
			}
			key := string(p.Kind) + " " + p.Namespace + "/" + p.Name
			if j, dup := seen[key]; dup {
				v.errorf(entry, "duplicate policy %s: also policies[%d]", key, j)
				continue
			}
			seen[key] = i
			out = append(out, p)
		}
	}
	return out
}
