package labels

import (
	"fmt"
	"strings"
)

// Label sources.
const (
	SourceK8s       = "k8s"
	SourceReserved  = "reserved"
	SourceCIDR      = "cidr"
	SourceFQDN      = "fqdn"
	SourceAny       = "any"
	SourceUnspec    = "unspec"
	SourceContainer = "container"
	SourceGenerated = "cilium-generated"
	// SourceGen is the source of identity labels the agent generates
	// (Cilium's "gen"), such as a pod's named-ports label.
	SourceGen = "gen"
)

// Well-known label keys.
const (
	// KeyPodNamespace is the namespace of a pod.
	KeyPodNamespace = "io.kubernetes.pod.namespace"
	// KeyPolicyCluster is the cluster an endpoint belongs to; every
	// endpoint identity carries it.
	KeyPolicyCluster = "io.cilium.k8s.policy.cluster"
	// PrefixNamespaceLabels prefixes the labels of the pod's namespace.
	PrefixNamespaceLabels = "io.cilium.k8s.namespace.labels"
	// KeyServiceAccount is the pod's service account.
	KeyServiceAccount = "io.cilium.k8s.policy.serviceaccount"
)

// Label is one label: source, key and value.
type Label struct {
	Source string `json:"source"`
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
}

// New returns a label.
func New(source, key, value string) Label { return Label{Source: source, Key: key, Value: value} }

// Parse reads "source:key=value", "source:key", or "key=value" (source
// defaultSource). The source ends at the first ':' that comes before any
// '=', so "cidr:2001:db8::/32" is source cidr, key 2001:db8::/32.
func Parse(s, defaultSource string) (Label, error) {
	l := Label{Source: defaultSource}
	rest := s
	eq := strings.IndexByte(s, '=')
	if i := strings.IndexByte(s, ':'); i >= 0 && (eq < 0 || i < eq) {
		l.Source, rest = s[:i], s[i+1:]
	}
	key, value, _ := strings.Cut(rest, "=")
	l.Key, l.Value = key, value
	if l.Source == "" {
		return Label{}, fmt.Errorf("label %q: empty source", s)
	}
	if l.Key == "" {
		return Label{}, fmt.Errorf("label %q: empty key", s)
	}
	return l, nil
}

// MustParse is Parse for literals; it panics on error.
func MustParse(s string) Label {
	l, err := Parse(s, SourceAny)
	if err != nil {
		panic(err)
	}
	return l
}

// String formats the label as "source:key=value", or "source:key" when
// the value is empty.
func (l Label) String() string {
	if l.Value == "" {
		return l.Source + ":" + l.Key
	}
	return l.Source + ":" + l.Key + "=" + l.Value
}

// kvstoreForm is "source:key=value;", the unit of the canonical string.
func (l Label) kvstoreForm(b *strings.Builder) {
	b.WriteString(l.Source)
	b.WriteByte(':')
	b.WriteString(l.Key)
	b.WriteByte('=')
	b.WriteString(l.Value)
	b.WriteByte(';')
}

// Matches reports whether l, used as a selector label, matches target:
// same key and value, and same source unless l's source is "any".
func (l Label) Matches(target Label) bool {
	return l.Key == target.Key && l.Value == target.Value &&
		(l.Source == SourceAny || l.Source == target.Source)
}
