package endpoint

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Request asks for an endpoint (the body of PUT /v1/endpoint/{id}).
type Request struct {
	ID datapath.EndpointID
	// NetNSPath is the endpoint's network namespace (absolute path).
	NetNSPath string
	// IfName is the interface name inside it; empty is "eth0".
	IfName string
	// Labels are "source:key=value" strings; no source is k8s.
	Labels []string
	// IPv4 and IPv6, when set, are the addresses to take (they must be
	// free and in the node's pod CIDR); unset, the IPAM picks.
	IPv4 string
	IPv6 string
	// NamedPorts are the endpoint's named ports.
	NamedPorts []policyapi.NamedPort
	// ContainerID, optional, is the container the endpoint is for (the
	// CNI plugin's CNI_CONTAINERID); one container has at most one
	// endpoint per interface name.
	ContainerID string
	// PodNamespace and PodName, optional, are the Kubernetes pod's.
	PodNamespace string
	PodName      string
}

// FieldError says which field of a request is wrong.
type FieldError struct {
	Field string
	Err   error
}

// Error implements error.
func (e *FieldError) Error() string { return fmt.Sprintf("field %s: %v", e.Field, e.Err) }

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// request is a validated Request.
type request struct {
	id         datapath.EndpointID
	netns      string
	ifName     string
	labels     labels.Labels
	ipv4, ipv6 netip.Addr
	namedPorts []policyapi.NamedPort
	owner      owner
}

// owner is whose endpoint it is: a container and a pod, all optional.
type owner struct {
	containerID, podNamespace, podName string
}

// defaultIfName is the interface name when a request gives none.
const defaultIfName = "eth0"

// maxIfName is the longest interface name (IFNAMSIZ - 1).
const maxIfName = 15

// validate checks every field and reports every wrong one.
func (r Request) validate(cluster string) (request, error) {
	out := request{id: r.ID, netns: r.NetNSPath, ifName: r.IfName}
	var errs []error
	if r.ID == 0 {
		errs = append(errs, fieldErr("id", "0 is not an endpoint id (1 to 65535)"))
	}
	if err := checkNetNS(r.NetNSPath); err != nil {
		errs = append(errs, &FieldError{Field: "netns-path", Err: err})
	}
	if out.ifName == "" {
		out.ifName = defaultIfName
	}
	if err := checkIfName(out.ifName); err != nil {
		errs = append(errs, &FieldError{Field: "interface-name", Err: err})
	}
	if len(r.Labels) == 0 {
		errs = append(errs, fieldErr("labels", "empty: an endpoint needs labels for its identity"))
	} else if ls, err := labels.ParseList(labels.SourceK8s, r.Labels...); err != nil {
		errs = append(errs, &FieldError{Field: "labels", Err: err})
	} else if err := labels.CheckEndpointLabels(ls, cluster); err != nil {
		errs = append(errs, &FieldError{Field: "labels", Err: err})
	} else {
		out.labels = ls
	}
	var err error
	if out.ipv4, err = parseAddr(r.IPv4, true); err != nil {
		errs = append(errs, &FieldError{Field: "ipv4", Err: err})
	}
	if out.ipv6, err = parseAddr(r.IPv6, false); err != nil {
		errs = append(errs, &FieldError{Field: "ipv6", Err: err})
	}
	if out.namedPorts, err = checkNamedPorts(r.NamedPorts); err != nil {
		errs = append(errs, err)
	}
	out.owner = owner{containerID: r.ContainerID, podNamespace: r.PodNamespace, podName: r.PodName}
	errs = append(errs, out.owner.check()...)
	return out, errors.Join(errs...)
}

func checkNetNS(path string) error {
	if path == "" {
		return errors.New("empty")
	}
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%q is not an absolute path", path)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("%q: %w", path, errors.Unwrap(err))
	}
	return nil
}

func checkIfName(name string) error {
	if len(name) > maxIfName {
		return fmt.Errorf("%q is longer than %d characters", name, maxIfName)
	}
	if name == "." || name == ".." || strings.ContainsAny(name, "/: \t\n") {
		return fmt.Errorf("%q is not an interface name (no '/', ':' or white space)", name)
	}
	return nil
}

func parseAddr(s string, v4 bool) (netip.Addr, error) {
	if s == "" {
		return netip.Addr{}, nil
	}
	ip, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return ip, fmt.Errorf("%q is not an IP address", s)
	case ip.Zone() != "":
		return ip, fmt.Errorf("%s: an endpoint address has no zone", s)
	case v4 && !ip.Is4():
		return ip, fmt.Errorf("%s is not an IPv4 address", s)
	case !v4 && (!ip.Is6() || ip.Is4In6()):
		return ip, fmt.Errorf("%s is not an IPv6 address", s)
	}
	return ip, nil
}
