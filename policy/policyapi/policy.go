package policyapi

import (
	"encoding/json"

	"github.com/apiary-net/apiary/policy/labels"
)

// Kind is the kind of a policy document.
type Kind string

// Kinds of policy documents.
const (
	// KindNetworkPolicy is Kubernetes' networking.k8s.io/v1 NetworkPolicy.
	KindNetworkPolicy Kind = "NetworkPolicy"
	// KindCiliumNetworkPolicy is cilium.io/v2 CiliumNetworkPolicy, a
	// namespaced policy.
	KindCiliumNetworkPolicy Kind = "CiliumNetworkPolicy"
	// KindCiliumClusterwideNetworkPolicy is cilium.io/v2
	// CiliumClusterwideNetworkPolicy, a cluster-scoped policy.
	KindCiliumClusterwideNetworkPolicy Kind = "CiliumClusterwideNetworkPolicy"
)

// IsNamespaced reports whether policies of kind k live in a namespace.
func (k Kind) IsNamespaced() bool { return k != KindCiliumClusterwideNetworkPolicy }

// Keys of the origin labels every rule carries (source k8s), Cilium's:
// the repository finds and deletes a policy's rules by them.
const (
	LabelPolicyName        = "io.cilium.k8s.policy.name"
	LabelPolicyNamespace   = "io.cilium.k8s.policy.namespace"
	LabelPolicyUID         = "io.cilium.k8s.policy.uid"
	LabelPolicyDerivedFrom = "io.cilium.k8s.policy.derived-from"
)

// Policy is one parsed policy document (or List item) and its rules.
type Policy struct {
	Kind Kind `json:"kind"`
	// Namespace is the policy's namespace; empty for clusterwide policies.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// UID is metadata.uid, when the document has one.
	UID string `json:"uid,omitempty"`
	// Source says where the document was read: "policy.yaml: document 2".
	Source string `json:"source"`
	// Labels are the origin labels: derived-from (the kind), name,
	// namespace (namespaced kinds) and uid (when known), all source k8s.
	Labels labels.Labels `json:"labels"`
	// Rules are the translated rules, each carrying Labels too.
	Rules []*Rule `json:"rules"`
	// Warnings are what the document says that was accepted but should
	// be fixed (a top-level description), for the caller to show.
	Warnings []Warning `json:"warnings,omitempty"`
}

// String names the policy: "CiliumNetworkPolicy default/allow-db".
func (p *Policy) String() string { return describeObject(p.Kind, p.Namespace, p.Name) }

// originLabels returns the origin labels of a policy.
func originLabels(kind Kind, namespace, name, uid string) labels.Labels {
	ls := []labels.Label{
		labels.New(labels.SourceK8s, LabelPolicyDerivedFrom, string(kind)),
		labels.New(labels.SourceK8s, LabelPolicyName, name),
	}
	if namespace != "" {
		ls = append(ls, labels.New(labels.SourceK8s, LabelPolicyNamespace, namespace))
	}
	if uid != "" {
		ls = append(ls, labels.New(labels.SourceK8s, LabelPolicyUID, uid))
	}
	return labels.FromSlice(ls)
}

// MarshalJSON writes the policy with its labels as strings.
func (p Policy) MarshalJSON() ([]byte, error) {
	type plain Policy
	return json.Marshal(struct {
		plain
		Labels []string `json:"labels"`
	}{plain(p), labelStrings(p.Labels)})
}
