package endpoint

import (
	"regexp"

	"github.com/apiary-net/apiary/datapath"
)

// maxContainerID bounds a container id.
const maxContainerID = 255

var (
	// containerIDRe is what the CNI spec allows in a container id.
	containerIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]*$`)
	// dnsLabelRe is a Kubernetes namespace name (RFC 1123 label).
	dnsLabelRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	// dnsSubdomainRe is a Kubernetes pod name (RFC 1123 subdomain).
	dnsSubdomainRe = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`)
)

// check reports each wrong field of the owner.
func (o owner) check() []error {
	var errs []error
	if id := o.containerID; id != "" && (len(id) > maxContainerID || !containerIDRe.MatchString(id)) {
		errs = append(errs, fieldErr("container-id", "%q is not a container id (at most %d letters, digits, '_', '.' and '-')", id, maxContainerID))
	}
	if ns := o.podNamespace; ns != "" && (len(ns) > 63 || !dnsLabelRe.MatchString(ns)) {
		errs = append(errs, fieldErr("pod-namespace", "%q is not a namespace name (RFC 1123 label)", ns))
	}
	switch n := o.podName; {
	case n == "":
	case len(n) > 253 || !dnsSubdomainRe.MatchString(n):
		errs = append(errs, fieldErr("pod-name", "%q is not a pod name (RFC 1123 subdomain)", n))
	case o.podNamespace == "":
		errs = append(errs, fieldErr("pod-name", "%q without a pod-namespace", n))
	}
	return errs
}

// containerEndpoint returns the endpoint of the container's interface
// ifName; an empty container id has none. The caller holds m.mu.
func (m *Manager) containerEndpoint(containerID, ifName string) (datapath.EndpointID, bool) {
	if containerID == "" {
		return 0, false
	}
	for id, ep := range m.eps {
		if ep.snap.ContainerID == containerID && ep.snap.IfName == ifName {
			return id, true
		}
	}
	return 0, false
}
