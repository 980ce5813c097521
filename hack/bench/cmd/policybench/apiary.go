package main

import (
	"fmt"
	"testing"

	"github.com/apiary-net/apiary/hack/bench/policyload"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// apiarySide runs the steps on apiary's engine (package policy).
type apiarySide struct {
	doc    []byte
	idents []*identity.Identity // the workload's identities
	pols   []*policyapi.Policy  // the workload's policies, parsed once
	full   *apiaryEngine        // identities and policies in, shared by the steps
}

// apiaryEngine is a selector cache and a repository over it.
type apiaryEngine struct {
	cache *selectorcache.Cache
	repo  *policy.Repository
}

func newApiarySide() (*apiarySide, error) {
	s := &apiarySide{doc: policyload.PolicyYAML()}
	for n := range policyload.Identities {
		s.idents = append(s.idents, apiaryIdentity(n, policyload.Labels(n)))
	}
	var err error
	if s.pols, err = s.parse(); err != nil {
		return nil, err
	}
	s.full = s.build(s.pols, s.idents)
	return s, nil
}

func apiaryIdentity(n int, ls map[string]string) *identity.Identity {
	return &identity.Identity{ID: identity.NumericIdentity(policyload.ID(n)), Labels: labels.FromMap(labels.SourceK8s, ls)}
}

func added(ids ...*identity.Identity) []identity.Change {
	out := make([]identity.Change, len(ids))
	for i, id := range ids {
		out[i] = identity.Change{Kind: identity.Added, Identity: id}
	}
	return out
}

func (s *apiarySide) parse() ([]*policyapi.Policy, error) {
	pols, err := policyapi.ParseDocuments("bench.yaml", s.doc, policyapi.DefaultOptions())
	if err != nil {
		return nil, fmt.Errorf("apiary: parse: %w", err)
	}
	if len(pols) != policyload.Policies {
		return nil, fmt.Errorf("apiary: %d policies parsed, want %d", len(pols), policyload.Policies)
	}
	return pols, nil
}

// newEngine returns an engine knowing the reserved identities only.
func newEngine() *apiaryEngine {
	c := selectorcache.New()
	c.OnIdentitiesChanged(added(identity.ReservedIdentities()...))
	return &apiaryEngine{cache: c, repo: policy.NewRepository(c)}
}

func (e *apiaryEngine) insert(pols []*policyapi.Policy) {
	for _, p := range pols {
		e.repo.ReplaceByLabels(p.Labels, p.Rules...)
	}
}

// build returns an engine with idents and pols.
func (s *apiarySide) build(pols []*policyapi.Policy, idents []*identity.Identity) *apiaryEngine {
	e := newEngine()
	for _, id := range idents {
		e.cache.OnIdentitiesChanged(added(id))
	}
	e.insert(pols)
	return e
}

// endpoint distills the policy of an endpoint with the workload's
// identity n (no named ports).
func (e *apiaryEngine) endpoint(id *identity.Identity) *policy.EndpointPolicy {
	return e.repo.Resolve(id).DistillPolicy(nil)
}

func (s *apiarySide) addIdentities(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := newEngine()
		e.insert(s.pols)
		var eps []*policy.EndpointPolicy
		for app := range policyload.Apps {
			eps = append(eps, e.endpoint(s.idents[app]))
		}
		b.StartTimer()
		for _, id := range s.idents {
			e.cache.OnIdentitiesChanged(added(id))
		}
		b.StopTimer()
		for _, ep := range eps {
			ep.Detach()
		}
		b.StartTimer()
	}
}

func (s *apiarySide) parsePolicies(b *testing.B) {
	for b.Loop() {
		if _, err := s.parse(); err != nil {
			failf(b, "%v", err)
		}
	}
}

func (s *apiarySide) insertPolicies(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := newEngine()
		b.StartTimer()
		e.insert(s.pols)
	}
}

func (s *apiarySide) cold(b *testing.B) {
	id := s.idents[0]
	for b.Loop() {
		s.full.repo.Add()
		s.full.endpoint(id).Detach()
	}
}

// warmResolve resolves the policy of identity 0 at a new revision while
// an endpoint with the previous policy still holds its selectors, as on
// a policy change to a running endpoint.
func (s *apiarySide) warmResolve(b *testing.B) {
	id := s.idents[0]
	anchor := s.full.endpoint(id)
	defer anchor.Detach()
	for b.Loop() {
		s.full.repo.Add()
		s.full.repo.Resolve(id)
	}
}

func (s *apiarySide) warmDistill(b *testing.B) {
	sp := s.full.repo.Resolve(s.idents[0])
	for b.Loop() {
		sp.DistillPolicy(nil).Detach()
	}
}

// addIdentity adds or deletes (alternating rounds over a pool built
// beforehand) one identity with app=1, which the policies of some
// endpoints select as a peer, or one that no policy selects, and takes
// the map changes of the endpoints of apps 0..endpoints-1: one key per
// endpoint allowing app=1, none for an unselected identity.
func (s *apiarySide) addIdentity(b *testing.B, selected bool, endpoints int) {
	eps := make([]*policy.EndpointPolicy, endpoints)
	for app := range eps {
		eps[app] = s.full.endpoint(s.idents[app])
		eps[app].ConsumeMapChanges()
	}
	defer func() {
		for _, ep := range eps {
			ep.Detach()
		}
	}()
	pool, want := make([][]identity.Change, 1000), 0
	for k := range pool {
		if selected {
			n := policyload.SelectedExtra(k)
			pool[k] = added(apiaryIdentity(n, policyload.Labels(n)))
			want = policyload.EndpointsAllowing(endpoints, 1)
		} else {
			n := policyload.UnselectedExtra(k)
			pool[k] = added(apiaryIdentity(n, policyload.UnselectedLabels(n)))
		}
	}
	k := 0
	for b.Loop() {
		ch := pool[k%len(pool)]
		ch[0].Kind = identity.Added
		if k/len(pool)%2 == 1 {
			ch[0].Kind = identity.Deleted
		}
		s.full.cache.OnIdentitiesChanged(ch)
		n := 0
		for _, ep := range eps {
			n += ep.ConsumeMapChanges().Len()
		}
		if n != want {
			failf(b, "apiary: %d map changes, want %d", n, want)
		}
		k++
	}
	for _, ch := range stillAdded(pool, k) {
		ch[0].Kind = identity.Deleted
		s.full.cache.OnIdentitiesChanged(ch)
	}
}

// endpoints resolves and distills the policies of 100 endpoints, one
// per app, at a new revision, then detaches them.
func (s *apiarySide) endpoints(b *testing.B) {
	eps := make([]*policy.EndpointPolicy, policyload.Apps)
	for b.Loop() {
		s.full.repo.Add()
		for app := range eps {
			eps[app] = s.full.endpoint(s.idents[app])
		}
		for _, ep := range eps {
			ep.Detach()
		}
	}
}

// setup builds the whole state from the workload's data: identities in
// the cache, policies parsed and inserted, endpoints resolved and
// distilled; it returns what holds it all.
func (s *apiarySide) setup(endpoints int) (any, error) {
	idents := make([]*identity.Identity, policyload.Identities)
	for n := range idents {
		idents[n] = apiaryIdentity(n, policyload.Labels(n))
	}
	pols, err := s.parse()
	if err != nil {
		return nil, err
	}
	e := s.build(pols, idents)
	eps := make([]*policy.EndpointPolicy, endpoints)
	for app := range eps {
		eps[app] = e.endpoint(idents[app])
	}
	return []any{e, eps}, nil
}
