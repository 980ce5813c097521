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
	services map[objectKey]convertedService
	slices   map[objectKey]convertedSlice
}

type objectKey struct{ namespace, name string }

type convertedService struct {
	obj *corev1.Service
	svc *Service // without backends; nil: not balanced
}

type convertedSlice struct {
	obj      *discoveryv1.EndpointSlice
	backends []Backend // never changed: a Service shares it
	warnings []string
}

// NewConverter returns an empty converter.
func NewConverter() *Converter {
	return &Converter{services: map[objectKey]convertedService{}, slices: map[objectKey]convertedSlice{}}
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
	delete(c.services, objectKey{namespace, name})
}

// ForgetSlice drops what the converter keeps of a deleted EndpointSlice.
func (c *Converter) ForgetSlice(namespace, name string) {
	delete(c.slices, objectKey{namespace, name})
}

// Len returns how many Services and EndpointSlices the converter keeps.
func (c *Converter) Len() (services, slices int) { return len(c.services), len(c.slices) }

func (c *Converter) service(svc *corev1.Service) *Service {
	k := objectKey{svc.Namespace, svc.Name}
	if cur, ok := c.services[k]; ok && cur.obj == svc && svc.ResourceVersion != "" {
		return cur.svc
	}
	s := serviceOf(svc)
	if s != nil {
		s.Backends = nil
	}
	if svc.ResourceVersion != "" {
		c.services[k] = convertedService{obj: svc, svc: s}
	}
	return s
}

func (c *Converter) slice(sl *discoveryv1.EndpointSlice) convertedSlice {
	k := objectKey{sl.Namespace, sl.Name}
	if cur, ok := c.slices[k]; ok && cur.obj == sl && sl.ResourceVersion != "" {
		return cur
	}
	cs := convertedSlice{obj: sl}
	cs.backends = backends(sl, &cs.warnings)
	cs.backends = cs.backends[:len(cs.backends):len(cs.backends)] // an append by a caller copies
	if sl.ResourceVersion != "" {
		c.slices[k] = cs
	}
	return cs
}
