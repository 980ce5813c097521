package main

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"

	"github.com/cilium/cilium/pkg/identity"
	"github.com/cilium/cilium/pkg/labels"
	"github.com/cilium/cilium/pkg/policy"

	"github.com/apiary-net/apiary/hack/bench/ciliumpolicy"
	"github.com/apiary-net/apiary/hack/bench/policyload"
)

// ciliumSide runs the steps on Cilium's engine, wired as its agent
// wires it (package ciliumpolicy).
type ciliumSide struct {
	doc    []byte
	parser ciliumpolicy.Parser
	idents []*identity.Identity    // the workload's identities
	res    []ciliumpolicy.Resource // the workload's policies, parsed once
	full   *ciliumpolicy.Engine    // identities and policies in, shared by the steps
}

func newCiliumSide() (*ciliumSide, error) {
	s := &ciliumSide{doc: policyload.PolicyYAML()}
	ciliumpolicy.Init(policyload.Cluster)
	s.parser = ciliumpolicy.Parser{Log: slog.New(slog.DiscardHandler), ClusterForPolicies: policyload.Cluster}
	for n := range policyload.Identities {
		s.idents = append(s.idents, ciliumIdentity(n, policyload.Labels(n)))
	}
	var err error
	if s.res, err = s.parse(); err != nil {
		return nil, err
	}
	s.full = s.build(s.res, s.idents)
	return s, nil
}

func ciliumIdentity(n int, ls map[string]string) *identity.Identity {
	return identity.NewIdentity(identity.NumericIdentity(policyload.ID(n)), labels.Map2Labels(ls, labels.LabelSourceK8s))
}

func idMap(ids ...*identity.Identity) identity.IdentityMap {
	m := make(identity.IdentityMap, len(ids))
	for _, id := range ids {
		m[id.ID] = id.LabelArray
	}
	return m
}

func (s *ciliumSide) parse() ([]ciliumpolicy.Resource, error) {
	res, err := s.parser.ParseDocuments(s.doc)
	if err != nil {
		return nil, fmt.Errorf("cilium: parse: %w", err)
	}
	if len(res) != policyload.Policies {
		return nil, fmt.Errorf("cilium: %d policies parsed, want %d", len(res), policyload.Policies)
	}
	return res, nil
}

// newEngine returns an engine with the reserved identities and the
// node's local endpoints (one per app) in the subject selector cache.
func (s *ciliumSide) newEngine(idents []*identity.Identity) *ciliumpolicy.Engine {
	e := ciliumpolicy.New(policyload.Cluster)
	for app := range policyload.Apps {
		e.AddLocalIdentity(idents[app])
	}
	return e
}

func insert(e *ciliumpolicy.Engine, res []ciliumpolicy.Resource) {
	for _, r := range res {
		e.Insert(r)
	}
}

// build returns an engine with idents and res, identities added one
// update each as in the other steps.
func (s *ciliumSide) build(res []ciliumpolicy.Resource, idents []*identity.Identity) *ciliumpolicy.Engine {
	e := s.newEngine(idents)
	var wg sync.WaitGroup
	for _, id := range idents {
		e.UpdateIdentitiesAsync(idMap(id), nil, &wg)
	}
	wg.Wait()
	insert(e, res)
	return e
}

// endpoint resolves and distills the policy of an endpoint with id.
func endpoint(e *ciliumpolicy.Engine, id *identity.Identity) (policy.SelectorPolicy, *policy.EndpointPolicy, error) {
	sp, err := e.Resolve(id)
	if err != nil {
		return nil, nil, err
	}
	return sp, e.Distill(sp, &ciliumpolicy.Endpoint{ID: uint64(id.ID)}), nil
}

func detach(e *ciliumpolicy.Engine, sp policy.SelectorPolicy, epp *policy.EndpointPolicy) {
	epp.Detach(e.Log)
	sp.Detach()
}

// addIdentities adds the identities one update each, as they arrive from
// the kvstore, without waiting for each: the agent's identity updater
// waits for the selector cache's notifications asynchronously; the time
// includes the wait for all of them.
func (s *ciliumSide) addIdentities(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := s.newEngine(s.idents)
		insert(e, s.res)
		type held struct {
			sp  policy.SelectorPolicy
			epp *policy.EndpointPolicy
		}
		var eps []held
		for app := range policyload.Apps {
			sp, epp, err := endpoint(e, s.idents[app])
			if err != nil {
				failf(b, "%v", err)
			}
			eps = append(eps, held{sp, epp})
		}
		b.StartTimer()
		var wg sync.WaitGroup
		for _, id := range s.idents {
			e.UpdateIdentitiesAsync(idMap(id), nil, &wg)
		}
		wg.Wait()
		b.StopTimer()
		for _, h := range eps {
			detach(e, h.sp, h.epp)
		}
		b.StartTimer()
	}
}

func (s *ciliumSide) parsePolicies(b *testing.B) {
	for b.Loop() {
		if _, err := s.parse(); err != nil {
			failf(b, "%v", err)
		}
	}
}

func (s *ciliumSide) insertPolicies(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		e := s.newEngine(s.idents)
		b.StartTimer()
		insert(e, s.res)
	}
}

func (s *ciliumSide) cold(b *testing.B) {
	id := s.idents[0]
	for b.Loop() {
		s.full.Repo.BumpRevision()
		sp, epp, err := endpoint(s.full, id)
		if err != nil {
			failf(b, "%v", err)
		}
		detach(s.full, sp, epp)
	}
}

// warmResolve computes the selector policy of identity 0 at a new
// revision while an endpoint with the previous one holds its selectors,
// and releases the previous one, as on a policy change to a running
// endpoint.
func (s *ciliumSide) warmResolve(b *testing.B) {
	id := s.idents[0]
	anchorSP, anchor, err := endpoint(s.full, id)
	if err != nil {
		failf(b, "%v", err)
	}
	defer detach(s.full, anchorSP, anchor)
	var prev policy.SelectorPolicy
	for b.Loop() {
		s.full.Repo.BumpRevision()
		sp, err := s.full.Resolve(id)
		if err != nil {
			failf(b, "%v", err)
		}
		if prev != nil {
			prev.Detach()
		}
		prev = sp
	}
	prev.Detach()
}

func (s *ciliumSide) warmDistill(b *testing.B) {
	sp, err := s.full.Resolve(s.idents[0])
	if err != nil {
		failf(b, "%v", err)
	}
	defer sp.Detach()
	ep := &ciliumpolicy.Endpoint{ID: 1}
	for b.Loop() {
		s.full.Distill(sp, ep).Detach(s.full.Log)
	}
}

// addIdentity is apiarySide.addIdentity on Cilium: UpdateIdentities
// (waiting for the notifications, as the agent waits before it has
// endpoints consume them) and ConsumeMapChanges.
func (s *ciliumSide) addIdentity(b *testing.B, selected bool, endpoints int) {
	sps := make([]policy.SelectorPolicy, endpoints)
	epps := make([]*policy.EndpointPolicy, endpoints)
	for app := range epps {
		var err error
		if sps[app], epps[app], err = endpoint(s.full, s.idents[app]); err != nil {
			failf(b, "%v", err)
		}
	}
	defer func() {
		for app := range epps {
			detach(s.full, sps[app], epps[app])
		}
	}()
	pool, want := make([]identity.IdentityMap, 1000), 0
	for k := range pool {
		if selected {
			n := policyload.SelectedExtra(k)
			pool[k] = idMap(ciliumIdentity(n, policyload.Labels(n)))
			want = policyload.EndpointsAllowing(endpoints, 1)
		} else {
			n := policyload.UnselectedExtra(k)
			pool[k] = idMap(ciliumIdentity(n, policyload.UnselectedLabels(n)))
		}
	}
	k := 0
	for b.Loop() {
		ch := pool[k%len(pool)]
		if k/len(pool)%2 == 0 {
			s.full.UpdateIdentities(ch, nil)
		} else {
			s.full.UpdateIdentities(nil, ch)
		}
		n := 0
		for _, epp := range epps {
			closer, changes := epp.ConsumeMapChanges()
			closer()
			n += len(changes.Adds) + len(changes.Deletes)
		}
		if n != want {
			failf(b, "cilium: %d map changes, want %d", n, want)
		}
		k++
	}
	for _, ch := range stillAdded(pool, k) {
		s.full.UpdateIdentities(nil, ch)
	}
}

func (s *ciliumSide) endpoints(b *testing.B) {
	sps := make([]policy.SelectorPolicy, policyload.Apps)
	epps := make([]*policy.EndpointPolicy, policyload.Apps)
	for b.Loop() {
		s.full.Repo.BumpRevision()
		for app := range sps {
			var err error
			if sps[app], epps[app], err = endpoint(s.full, s.idents[app]); err != nil {
				failf(b, "%v", err)
			}
		}
		for app := range sps {
			detach(s.full, sps[app], epps[app])
		}
	}
}

// setup is apiarySide.setup on Cilium.
func (s *ciliumSide) setup(endpoints int) (any, error) {
	idents := make([]*identity.Identity, policyload.Identities)
	for n := range idents {
		idents[n] = ciliumIdentity(n, policyload.Labels(n))
	}
	res, err := s.parse()
	if err != nil {
		return nil, err
	}
	e := s.build(res, idents)
	var held []any
	for app := range endpoints {
		sp, epp, err := endpoint(e, idents[app])
		if err != nil {
			return nil, err
		}
		held = append(held, sp, epp)
	}
	return []any{e, held}, nil
}
