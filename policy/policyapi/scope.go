package policyapi

import (
	"fmt"
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
)

// scope is what the selectors of one document are narrowed to: its
// namespace, and the local cluster when selectors default to it. The
// rules are Cilium's (pkg/k8s/apis/cilium.io/utils): a namespaced policy
// only applies to, and by default only talks about, pods of its own
// namespace; with --policy-default-local-cluster a selector that says
// nothing about the cluster selects only the local one.
type scope struct {
	// namespace is the policy namespace; "" for clusterwide policies.
	namespace string
	// cluster is the cluster injected into peer selectors; "" when they
	// select every cluster.
	cluster string
	// clusterName is the local cluster, for the cluster entity.
	clusterName string
}

func newScope(opts Options, namespace string) scope {
	sc := scope{namespace: namespace, clusterName: opts.ClusterName}
	if opts.DefaultLocalCluster {
		sc.cluster = opts.ClusterName
	}
	return sc
}

// sourcesK8sOrAny are the sources under which a selector can name the
// namespace or cluster label.
var sourcesK8sOrAny = []string{labels.SourceK8s, labels.SourceAny}

// subject narrows the endpointSelector of a Cilium rule: a namespaced
// policy applies only in its namespace, so the namespace label is added.
// A selector that asks for another namespace is an error rather than
// being overridden.
func (sc scope) subject(sel EndpointSelector) (EndpointSelector, error) {
	if sc.namespace == "" {
		return sel, nil
	}
	for _, r := range sel.requirements {
		if r.Key == labels.KeyPodNamespace && slices.Contains(sourcesK8sOrAny, r.Source) &&
			r.Operator == OpIn && !slices.Contains(r.Values, sc.namespace) {
			return sel, fmt.Errorf("selects namespace %s, but a namespaced policy only applies in its own namespace %q",
				r.String(), sc.namespace)
		}
	}
	return sel.with(sc.namespaceIs()), nil
}

// peer narrows a Cilium fromEndpoints/toEndpoints selector. Selectors of
// reserved identities are left alone. Otherwise, without a namespace
// requirement a namespaced policy's peer is in the policy namespace
// (unless it selects by namespace labels) and a clusterwide policy's peer
// is any pod (the namespace label exists; not for rules of endpoints
// being initialised, which have no labels); without a cluster requirement
// the peer is in the local cluster when defaulting to it.
func (sc scope) peer(sel EndpointSelector, subjectIsInit bool) EndpointSelector {
	if sel.hasSource(labels.SourceReserved) {
		return sel
	}
	var add []Requirement
	if !sel.hasKey(labels.KeyPodNamespace, sourcesK8sOrAny...) {
		switch {
		case sc.namespace != "" && !sel.hasKeyPrefix(labels.PrefixNamespaceLabels+".", sourcesK8sOrAny...):
			add = append(add, sc.namespaceIs())
		case sc.namespace == "" && !subjectIsInit:
			add = append(add, Requirement{Source: labels.SourceK8s, Key: labels.KeyPodNamespace, Operator: OpExists})
		}
	}
	return sc.inCluster(sel.with(add...))
}

// inCluster adds the local cluster to sel when defaulting to it and sel
// names no cluster.
func (sc scope) inCluster(sel EndpointSelector) EndpointSelector {
	if sc.cluster == "" || sel.hasKey(labels.KeyPolicyCluster, sourcesK8sOrAny...) {
		return sel
	}
	return sel.with(Requirement{Source: labels.SourceK8s, Key: labels.KeyPolicyCluster, Operator: OpIn, Values: []string{sc.cluster}})
}

func (sc scope) namespaceIs() Requirement {
	return Requirement{Source: labels.SourceK8s, Key: labels.KeyPodNamespace, Operator: OpIn, Values: []string{sc.namespace}}
}
