package policyapi_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// pod returns the identity labels of a pod of namespace ns in cluster
// with k8s labels kv ("app=web", ...), as the agent would give it.
func pod(t testing.TB, cluster, ns string, kv ...string) labels.Labels {
	t.Helper()
	ls, err := labels.ParseList(labels.SourceK8s, kv...)
	if err != nil {
		t.Fatal(err)
	}
	return ls.With(
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, ns),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, cluster),
	)
}

// reserved returns the labels of a reserved identity.
func reserved(id identity.NumericIdentity) labels.Labels { return identity.ReservedLabels(id) }

// cidr returns the labels of the CIDR identity of prefix.
func cidr(prefix string) labels.Labels { return identity.CIDRLabels(netip.MustParsePrefix(prefix)) }
