package policy_test

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// pod returns the identity of a pod in namespace default of cluster
// default with the given k8s labels ("app=web").
func pod(id identity.NumericIdentity, kvs ...string) *identity.Identity {
	ls := []labels.Label{
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "default"),
	}
	for _, kv := range kvs {
		l, err := labels.Parse(kv, labels.SourceK8s)
		if err != nil {
			panic(err)
		}
		ls = append(ls, l)
	}
	return &identity.Identity{ID: id, Labels: labels.FromSlice(ls)}
}

// cidrIdentity returns the local CIDR identity of prefix.
func cidrIdentity(id identity.NumericIdentity, prefix string) *identity.Identity {
	return &identity.Identity{ID: identity.ScopeLocal | id, Labels: identity.CIDRLabels(netip.MustParsePrefix(prefix))}
}

// added returns Added changes for idents.
func added(idents ...*identity.Identity) []identity.Change {
	out := make([]identity.Change, len(idents))
	for i, id := range idents {
		out[i] = identity.Change{Kind: identity.Added, Identity: id}
	}
	return out
}

// deleted returns Deleted changes for idents.
func deleted(idents ...*identity.Identity) []identity.Change {
	out := added(idents...)
	for i := range out {
		out[i].Kind = identity.Deleted
	}
	return out
}

// parseRules parses policy documents with the default options and
// returns their rules.
func parseRules(t testing.TB, doc string) []*policyapi.Rule {
	t.Helper()
	pols, err := policyapi.ParseDocuments("test.yaml", []byte(doc), policyapi.DefaultOptions())
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	var rules []*policyapi.Rule
	for _, p := range pols {
		rules = append(rules, p.Rules...)
	}
	return rules
}

// engine is a repository and its selector cache, with the reserved
// identities known, and the table of peer named ports it resolves
// egress port names against.
type engine struct {
	cache *selectorcache.Cache
	repo  *policy.Repository
	ports *policy.PeerPortTable
}

func newEngine(idents ...*identity.Identity) engine {
	c := selectorcache.New()
	c.OnIdentitiesChanged(added(identity.ReservedIdentities()...))
	c.OnIdentitiesChanged(added(idents...))
	e := engine{cache: c, repo: policy.NewRepository(c), ports: policy.NewPeerPortTable()}
	e.repo.SetPeerNamedPorts(e.ports)
	return e
}

// setPeerPorts records that the endpoint key of identity id declares
// ports and tells the repository.
func (e engine) setPeerPorts(key string, id identity.NumericIdentity, ports ...policyapi.NamedPort) {
	e.repo.PeerNamedPortsChanged(e.ports.Upsert(key, id, ports)...)
}

// endpoint distills the policy of an endpoint with ident and named ports.
func (e engine) endpoint(ident *identity.Identity, named ...policyapi.NamedPort) *policy.EndpointPolicy {
	return e.repo.Resolve(ident).DistillPolicy(named)
}
