package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// endpointSpec is one --endpoint.
type endpointSpec struct {
	// ID numbers the endpoints from 1 in flag order.
	ID uint16
	// Labels are the endpoint's labels, a namespace label included.
	Labels labels.Labels
	// IP is the endpoint's address; invalid when none was given (the
	// endpoint then stays out of the ipcache).
	IP netip.Addr
}

// endpoints parses the --endpoint flags.
func (c *Config) endpoints() ([]endpointSpec, error) {
	var out []endpointSpec
	for i, s := range c.Endpoint {
		spec, err := parseEndpoint(s)
		if err != nil {
			return nil, fmt.Errorf("--endpoint %q: %w", s, err)
		}
		spec.ID = uint16(i + 1)
		out = append(out, spec)
	}
	return out, nil
}

// defaultNamespace is the namespace of endpoints whose labels name none,
// the namespace of policies without metadata.namespace.
var defaultNamespace = labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default")

// parseEndpoint reads "app=web,tier=front@10.0.1.5".
func parseEndpoint(s string) (endpointSpec, error) {
	lbls, ip, hasIP := strings.Cut(s, "@")
	var spec endpointSpec
	if hasIP {
		addr, err := netip.ParseAddr(ip)
		if err != nil {
			return spec, fmt.Errorf("%q is not an IP address", ip)
		}
		spec.IP = addr
	}
	if lbls == "" {
		return spec, fmt.Errorf("no labels")
	}
	ls, err := labels.ParseList(labels.SourceK8s, strings.Split(lbls, ",")...)
	if err != nil {
		return spec, err
	}
	if _, ok := ls.Get(labels.KeyPodNamespace); !ok {
		ls = ls.With(defaultNamespace)
	}
	spec.Labels = ls
	return spec, nil
}
