package svcmanager

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// Converter is FromKubernetes for a watcher: it keeps what it parsed of
// each Service and EndpointSlice, so that a change of one slice parses
// that slice only, not the Service and its other slices again (a
// service of 1,000 endpoints has ten slices or more). An object counts
// as seen when it is the same object (informers hand out one object per
// version and never change it) with the same non-empty resourceVersion;
// objects without one are parsed every time. Not safe for concurrent
// use: the watcher that owns it calls it from its one goroutine.
type Converter struct {
	// services are found by the object itself: a change of a slice then
	// reads nothing of its Service but what the manager needs.
	services map[*corev1.Service]*Service // nil: not balanced
	names    map[objectKey]*corev1.Service
	slices   map[objectKey]*convertedSlice // changed in place: one lookup per change
	// portNames are one-name lists shared by every backend of a port
	// of that name: one per port name the cluster uses.
	portNames map[string][]string
}

type objectKey struct{ namespace, name string }

type convertedSlice struct {
	obj      *discoveryv1.EndpointSlice
	backends []Backend // never changed: a Service shares it
	warnings []string
}

// NewConverter returns an empty converter.
func NewConverter() *Converter {
	return &Converter{services: map[*corev1.Service]*Service{}, names: map[objectKey]*corev1.Service{},
		slices: map[objectKey]*convertedSlice{}, portNames: map[string][]string{}}
}

// Convert returns what FromKubernetes(svc, eps) returns, parsing only
// the objects it has not seen.
func (c *Converter) Convert(svc *corev1.Service, eps []*discoveryv1.EndpointSlice) *Service {
	base := c.service(svc)
	if base == nil {
		return nil
	}
	s := *base
	if len(eps) == 1 { // the common case: no copy of the backends
		p := c.slice(eps[0])
		s.Backends = p.backends // shared: nobody changes a Service's backends
		if len(p.warnings) > 0 {
			s.Warnings = append(append([]string(nil), base.Warnings...), p.warnings...)
		}
		return &s
	}
	n := 0
	parts := make([]convertedSlice, len(eps))
	for i, sl := range eps {
		parts[i] = c.slice(sl)
		n += len(parts[i].backends)
	}
	if n > 0 {
		s.Backends = make([]Backend, 0, n)
	}
	s.Warnings = append([]string(nil), base.Warnings...)
	for _, p := range parts {
		s.Backends = append(s.Backends, p.backends...)
		s.Warnings = append(s.Warnings, p.warnings...)
	}
	if len(s.Warnings) == 0 {
		s.Warnings = nil
	}
	return &s
}

// ForgetService drops what the converter keeps of a deleted Service.
func (c *Converter) ForgetService(namespace, name string) {
	k := objectKey{namespace, name}
	delete(c.services, c.names[k])
	delete(c.names, k)
}

// ForgetSlice drops what the converter keeps of a deleted EndpointSlice.
func (c *Converter) ForgetSlice(namespace, name string) {
	delete(c.slices, objectKey{namespace, name})
}

// Len returns how many Services and EndpointSlices the converter keeps.
func (c *Converter) Len() (services, slices int) { return len(c.names), len(c.slices) }

func (c *Converter) service(svc *corev1.Service) *Service {
	if s, ok := c.services[svc]; ok {
		return s // kept only with a resourceVersion
	}
	s := serviceOf(svc)
	if svc.ResourceVersion != "" {
		k := objectKey{svc.Namespace, svc.Name}
		delete(c.services, c.names[k]) // the version before
		c.names[k] = svc
		c.services[svc] = s
	}
	return s
}

func (c *Converter) slice(sl *discoveryv1.EndpointSlice) convertedSlice {
	k := objectKey{sl.Namespace, sl.Name}
	cur := c.slices[k]
	if cur != nil && cur.obj == sl {
		return *cur // kept only with a resourceVersion
	}
	cs := convertedSlice{obj: sl}
	cs.backends = backends(sl, &cs.warnings, c.portName)
	cs.backends = cs.backends[:len(cs.backends):len(cs.backends)] // an append by a caller copies
	switch {
	case sl.ResourceVersion == "":
	case cur != nil:
		*cur = cs
	default:
		c.slices[k] = &cs
	}
	return cs
}

// portName returns the shared list of the one port name n.
func (c *Converter) portName(n string) []string {
	l, ok := c.portNames[n]
	if !ok {
		l = []string{n}
		c.portNames[n] = l
	}
	return l
}
