package svcmanager

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AnnotationLoadBalancerSourceRanges restricts the clients of a
// LoadBalancer Service's frontends when spec.loadBalancerSourceRanges
// is empty: comma-separated CIDRs (Kubernetes' older spelling, which
// kube-proxy and Cilium still read).
const AnnotationLoadBalancerSourceRanges = "service.beta.kubernetes.io/load-balancer-source-ranges"

// denyIPv4 and denyIPv6 are the ranges of a family that match no client
// (the unspecified address's host prefix): what a LoadBalancer frontend
// of that family gets when the Service's ranges are all of the other
// family. Shared by every Service: never changed (an append copies).
var (
	denyIPv4 = []netip.Prefix{netip.PrefixFrom(netip.IPv4Unspecified(), 32)}
	denyIPv6 = []netip.Prefix{netip.PrefixFrom(netip.IPv6Unspecified(), 128)}
)

// sourceRanges returns the client ranges of a LoadBalancer Service
// (none for another type, as Kubernetes ignores them):
// spec.loadBalancerSourceRanges or, when empty, the annotation; masked,
// sorted and deduplicated. An entry that does not parse is named in
// warnings and closes the Service from outside: the ranges are then
// both deny ranges, never the other entries (a bad entry must not open
// the Service wider than its owner meant).
func sourceRanges(svc *corev1.Service, warnings *[]string) []netip.Prefix {
	if svc.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return nil
	}
	field, entries := "spec.loadBalancerSourceRanges", svc.Spec.LoadBalancerSourceRanges
	if len(entries) == 0 {
		v := strings.TrimSpace(svc.Annotations[AnnotationLoadBalancerSourceRanges])
		if v == "" {
			return nil
		}
		field, entries = "annotation "+AnnotationLoadBalancerSourceRanges, strings.Split(v, ",")
	}
	out := make([]netip.Prefix, 0, len(entries))
	bad := false
	for i, e := range entries {
		e = strings.TrimSpace(e) // Kubernetes allows the padding
		p, ok := parseCIDRSloppy(e)
		if !ok {
			*warnings = append(*warnings, fmt.Sprintf("%s[%d]: %q is not a CIDR: the service's LoadBalancer frontends accept no client from outside until it is fixed", field, i, e))
			bad = true
			continue
		}
		out = append(out, p)
	}
	if bad {
		return []netip.Prefix{denyIPv4[0], denyIPv6[0]}
	}
	slices.SortFunc(out, netip.Prefix.Compare)
	return slices.Clip(slices.Compact(out)) // an append by a caller copies
}

// parseCIDRSloppy parses a CIDR as Kubernetes validates one
// (netutils.ParseCIDRSloppy): IPv4 fields and the prefix length may
// have leading zeros (decimal), host bits may be set. The prefix is
// returned masked; an IPv4-mapped IPv6 one of /96 or longer as the
// IPv4 prefix it covers.
func parseCIDRSloppy(s string) (netip.Prefix, bool) {
	addr, length, ok := strings.Cut(s, "/")
	if !ok {
		return netip.Prefix{}, false
	}
	a, err := parseAddrSloppy(addr)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, false
	}
	bits, ok := decimal(length, a.BitLen())
	if !ok {
		return netip.Prefix{}, false
	}
	if a.Is4In6() && bits >= 96 {
		a, bits = a.Unmap(), bits-96
	}
	return netip.PrefixFrom(a, bits).Masked(), true
}

// rangesByFamily returns the IPv4 and the IPv6 ones of a Service's
// ranges (when it has any), each a part of ranges (sorted: IPv4 first)
// and so shared by the Service's frontends of that family; a family
// without a range gets its deny range, so that a Service restricted to
// one family's clients is closed to the other's.
func rangesByFamily(ranges []netip.Prefix) (v4, v6 []netip.Prefix) {
	k := 0
	for k < len(ranges) && ranges[k].Addr().Is4() {
		k++
	}
	v4, v6 = ranges[:k:k], ranges[k:len(ranges):len(ranges)]
	if slices.ContainsFunc(v6, func(p netip.Prefix) bool { return p.Addr().Is4() }) { // not sorted: not FromKubernetes's
		v4 = slices.Clip(slices.DeleteFunc(slices.Clone(ranges), func(p netip.Prefix) bool { return !p.Addr().Is4() }))
		v6 = slices.Clip(slices.DeleteFunc(slices.Clone(ranges), func(p netip.Prefix) bool { return p.Addr().Is4() }))
	}
	if len(v4) == 0 {
		v4 = denyIPv4
	}
	if len(v6) == 0 {
		v6 = denyIPv6
	}
	return v4, v6
}
