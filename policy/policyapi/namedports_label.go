package policyapi

import (
	"slices"
	"strconv"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// Named-ports identity labels, as Cilium v1.20's agent derives them for
// a pod (pkg/k8s NamedPortsIdentityLabels): pods of one label set that
// number a port name differently get different identities, so that an
// egress rule on a port name opens each pod's own number, and two
// clusters sharing identities across a mesh agree on them.
const (
	// NamedPortsLabelKey is the key of the first named-ports label; the
	// next ones, when the ports do not fit one label value, are
	// NamedPortsLabelKey-1, -2, ...
	NamedPortsLabelKey = "io.cilium.k8s.named-ports"
	// maxLabelValue is Kubernetes' longest label value.
	maxLabelValue = 63
)

// NamedPortsIdentityLabels returns the generated identity labels of an
// endpoint's named ports (source gen): the ports sorted by name as
// "name.PROTO.port", joined with '_', split over as many labels as 63
// bytes per value need. No ports, no labels.
func NamedPortsIdentityLabels(ports []NamedPort) labels.Labels {
	if len(ports) == 0 {
		return nil
	}
	byName := make(map[string]NamedPort, len(ports))
	for _, p := range ports {
		byName[p.Name] = p.Normalized()
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	var out []labels.Label
	var value strings.Builder
	flush := func() {
		key := NamedPortsLabelKey
		if len(out) > 0 {
			key += "-" + strconv.Itoa(len(out))
		}
		out = append(out, labels.New(labels.SourceGen, key, value.String()))
		value.Reset()
	}
	for _, n := range names {
		p := byName[n]
		part := n + "." + string(p.Protocol) + "." + strconv.Itoa(int(p.Port))
		if value.Len() > 0 && value.Len()+1+len(part) > maxLabelValue {
			flush()
		}
		if value.Len() > 0 {
			value.WriteByte('_')
		}
		value.WriteString(part)
	}
	if value.Len() > 0 {
		flush()
	}
	return labels.FromSlice(out)
}
