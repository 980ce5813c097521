package svcmanager

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/yaml"
)

// StateFile is the format of --lb-state-file, Cilium's: Kubernetes
// Services and EndpointSlices (label kubernetes.io/service-name names a
// service of the file), so that an agent without Kubernetes (embedded,
// the demo lab) balances the same objects a cluster would hold.
type StateFile struct {
	Services  []corev1.Service            `json:"services"`
	Endpoints []discoveryv1.EndpointSlice `json:"endpoints"`
}

// ParseStateFile decodes a state file strictly (unknown or duplicate
// fields are errors; YAML for .yaml/.yml, JSON for .json, as Cilium
// deduces it) and returns its services. Any error names the file and the
// field, and the file is refused whole: an empty file is no services.
func ParseStateFile(name string, data []byte) ([]*Service, error) {
	var sf StateFile
	if err := decodeStateFile(name, data, &sf); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	svcs, err := sf.services()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return svcs, nil
}

func decodeStateFile(name string, data []byte, sf *StateFile) error {
	switch filepath.Ext(name) {
	case ".yaml", ".yml":
		j, err := yaml.YAMLToJSONStrict(data)
		if err != nil {
			return err
		}
		data = j
	case ".json":
	default:
		return fmt.Errorf("unknown format: the name must end in .json, .yaml or .yml")
	}
	if t := bytes.TrimSpace(data); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	var raw struct {
		Services  []json.RawMessage `json:"services"`
		Endpoints []json.RawMessage `json:"endpoints"`
	}
	if err := strictJSON(data, &raw); err != nil {
		return err
	}
	sf.Services = make([]corev1.Service, len(raw.Services))
	for i, r := range raw.Services {
		if err := strictJSON(r, &sf.Services[i]); err != nil {
			return fmt.Errorf("services[%d]: %w", i, err)
		}
	}
	sf.Endpoints = make([]discoveryv1.EndpointSlice, len(raw.Endpoints))
	for i, r := range raw.Endpoints {
		if err := strictJSON(r, &sf.Endpoints[i]); err != nil {
			return fmt.Errorf("endpoints[%d]: %w", i, err)
		}
	}
	return nil
}

// strictJSON decodes one JSON value refusing unknown fields and
// trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("data after the document")
	}
	return nil
}

// services validates the file and converts its services; the warnings
// FromKubernetes would skip are errors here.
func (sf *StateFile) services() ([]*Service, error) {
	byName := map[string]int{}
	for i, svc := range sf.Services {
		field := fmt.Sprintf("services[%d]", i)
		if err := checkName(field, svc.Namespace, svc.Name); err != nil {
			return nil, err
		}
		nn := svc.Namespace + "/" + svc.Name
		if j, dup := byName[nn]; dup {
			return nil, fmt.Errorf("%s: service %s already defined at services[%d]", field, nn, j)
		}
		byName[nn] = i
		if err := checkService(field, &svc); err != nil {
			return nil, err
		}
	}
	slices := make([][]*discoveryv1.EndpointSlice, len(sf.Services))
	for i := range sf.Endpoints {
		sl := &sf.Endpoints[i]
		field := fmt.Sprintf("endpoints[%d]", i)
		if err := checkName(field, sl.Namespace, sl.Name); err != nil {
			return nil, err
		}
		owner := sl.Namespace + "/" + sl.Labels[discoveryv1.LabelServiceName]
		j, ok := byName[owner]
		if !ok {
			return nil, fmt.Errorf("%s.metadata.labels[%s]: no service %s in the file", field, discoveryv1.LabelServiceName, owner)
		}
		if err := checkSlice(field, sl); err != nil {
			return nil, err
		}
		slices[j] = append(slices[j], sl)
	}
	var out []*Service
	for i := range sf.Services {
		s := FromKubernetes(&sf.Services[i], slices[i])
		if s == nil {
			return nil, fmt.Errorf("services[%d].spec.type: ExternalName services are not balanced", i)
		}
		if len(s.Warnings) > 0 {
			return nil, fmt.Errorf("services[%d]: %s", i, s.Warnings[0])
		}
		out = append(out, s)
	}
	return out, nil
}

func checkName(field, namespace, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s.metadata.name: empty", field)
	case namespace == "":
		return fmt.Errorf("%s.metadata.namespace: empty", field)
	}
	return nil
}

func checkService(field string, svc *corev1.Service) error {
	for j, p := range svc.Spec.Ports {
		if p.Port < 1 || p.Port > 65535 {
			return fmt.Errorf("%s.spec.ports[%d].port: %d is not a port number", field, j, p.Port)
		}
		if !knownProtocol(p.Protocol) {
			return fmt.Errorf("%s.spec.ports[%d].protocol: %q is not TCP, UDP or SCTP", field, j, p.Protocol)
		}
		if p.NodePort < 0 || p.NodePort > 65535 {
			return fmt.Errorf("%s.spec.ports[%d].nodePort: %d is not a port number", field, j, p.NodePort)
		}
	}
	return nil
}

func checkSlice(field string, sl *discoveryv1.EndpointSlice) error {
	if sl.AddressType != discoveryv1.AddressTypeIPv4 && sl.AddressType != discoveryv1.AddressTypeIPv6 {
		return fmt.Errorf("%s.addressType: %q is not IPv4 or IPv6", field, sl.AddressType)
	}
	for j, p := range sl.Ports {
		if p.Port != nil && (*p.Port < 1 || *p.Port > 65535) {
			return fmt.Errorf("%s.ports[%d].port: %d is not a port number", field, j, *p.Port)
		}
		if p.Protocol != nil && !knownProtocol(*p.Protocol) {
			return fmt.Errorf("%s.ports[%d].protocol: %q is not TCP, UDP or SCTP", field, j, *p.Protocol)
		}
	}
	for j, ep := range sl.Endpoints {
		for k, a := range ep.Addresses {
			ip, err := netip.ParseAddr(a)
			if err != nil {
				return fmt.Errorf("%s.endpoints[%d].addresses[%d]: %q is not an IP address", field, j, k, a)
			}
			if ip.Unmap().Is4() != (sl.AddressType == discoveryv1.AddressTypeIPv4) {
				return fmt.Errorf("%s.endpoints[%d].addresses[%d]: %s is not of addressType %s", field, j, k, a, sl.AddressType)
			}
		}
	}
	return nil
}

func knownProtocol(p corev1.Protocol) bool {
	return p == "" || p == corev1.ProtocolTCP || p == corev1.ProtocolUDP || p == corev1.ProtocolSCTP
}
