package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// endpoint is one endpoint of this node and what its "policy map" holds.
type endpoint struct {
	spec      endpointSpec
	ident     *identity.Identity
	published bool // in the ipcache
	policy    *policy.EndpointPolicy
	// state is what the datapath wrote: a real one keeps it in a BPF
	// map and writes only the changes.
	state policy.MapState
}

// endpointTable owns the endpoints: at start it allocates their
// identities, puts them in the ipcache and writes their map state;
// afterwards it writes the changes that policy regenerations and
// identity changes make; at stop it releases what it took.
type endpointTable struct {
	specs        []endpointSpec
	alloc        identity.Allocator
	ipc          ipcache.IPCache
	repo         *policy.Repository
	cache        *selectorcache.Cache
	out          *printer
	log          *slog.Logger
	identitySync *job.Trigger // syncs the map states after identity changes

	mu        sync.Mutex
	endpoints []*endpoint
}

type tableParams struct {
	cell.In

	Config        Config
	Allocator     identity.Allocator
	IPCache       ipcache.IPCache
	Repository    *policy.Repository
	SelectorCache *selectorcache.Cache
	Regenerations policy.RegenerationRequests
	Printer       *printer
	Lifecycle     cell.Lifecycle
	Jobs          job.Group
	Log           *slog.Logger
}

// newEndpointTable registers the table's start and stop hooks, its
// regeneration subscription and its identity-sync job (which starts after
// the start hook).
func newEndpointTable(p tableParams) (*endpointTable, error) {
	specs, err := p.Config.endpoints()
	if err != nil {
		return nil, err
	}
	t := &endpointTable{
		specs: specs, alloc: p.Allocator, ipc: p.IPCache, repo: p.Repository,
		cache: p.SelectorCache, out: p.Printer, log: p.Log,
	}
	t.identitySync = job.NewTrigger("identity-sync", t.syncIdentities, job.TriggerParams{After: 10 * time.Millisecond})
	p.Lifecycle.Append(cell.Hook{OnStart: t.start, OnStop: t.stop})
	p.Jobs.Add(t.identitySync)
	// After the selector cache has applied a batch of identity changes,
	// the endpoints' policies hold the map changes it caused.
	p.SelectorCache.OnApplied(func([]identity.Change) { t.identitySync.Trigger("identities changed") })
	p.Regenerations.Subscribe(t.regenerate)
	return t, nil
}

// start sets up every endpoint; on an error it releases what it took.
func (t *endpointTable) start(ctx cell.HookContext) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, spec := range t.specs {
		if err := t.addLocked(ctx, spec); err != nil {
			return errors.Join(fmt.Errorf("set up endpoint %d: %w", spec.ID, err), t.removeAllLocked(ctx))
		}
	}
	return nil
}

// addLocked allocates the endpoint's identity, puts its IP in the
// ipcache (and, with a kvstore, publishes it) and writes its map state.
func (t *endpointTable) addLocked(ctx context.Context, spec endpointSpec) error {
	ident, _, err := t.alloc.AllocateIdentity(ctx, spec.Labels)
	if err != nil {
		return err
	}
	ep := &endpoint{spec: spec, ident: ident}
	t.endpoints = append(t.endpoints, ep)
	t.out.printf("endpoint %d: identity %d (%s)", spec.ID, ident.ID, ident.Labels)
	if spec.IP.IsValid() {
		if _, err := t.ipc.UpsertLocalEndpoint(ipcache.LocalEndpoint{IP: spec.IP, Identity: ident.ID, EndpointID: spec.ID}); err != nil {
			return err
		}
		ep.published = true
	}
	ep.policy = t.repo.Resolve(ident).DistillPolicy(nil)
	state := ep.policy.ConsumeMapState()
	ep.state = policy.MapState{}
	t.out.printf("endpoint %d: policy revision %d, %d keys", spec.ID, ep.policy.SelectorPolicy().Revision(), len(state))
	t.write(ep, ep.state.Diff(state), "")
	return nil
}

// stop releases every endpoint.
func (t *endpointTable) stop(ctx cell.HookContext) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.removeAllLocked(ctx)
}

// removeAllLocked detaches the endpoints' policies, takes their IPs out
// of the ipcache and releases their identities, newest first.
func (t *endpointTable) removeAllLocked(ctx context.Context) error {
	var errs []error
	for _, ep := range slices.Backward(t.endpoints) {
		if ep.policy != nil {
			ep.policy.Detach()
		}
		if ep.published {
			if _, err := t.ipc.DeleteLocalEndpoint(ep.spec.IP); err != nil {
				errs = append(errs, fmt.Errorf("delete endpoint %d from the ipcache: %w", ep.spec.ID, err))
			}
		}
		if _, err := t.alloc.Release(ctx, ep.ident); err != nil {
			errs = append(errs, fmt.Errorf("release identity of endpoint %d: %w", ep.spec.ID, err))
			continue
		}
		t.out.printf("endpoint %d: released identity %d", ep.spec.ID, ep.ident.ID)
	}
	t.endpoints = nil
	return errors.Join(errs...)
}

// regenerate runs after a burst of policy changes: each endpoint whose
// identity's policy has a new revision distills it and writes the
// difference; the others write the changes pending in their policy
// (peer named ports, identities).
func (t *endpointTable) regenerate(context.Context, []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ep := range t.endpoints {
		sp := t.repo.Resolve(ep.ident)
		if sp == ep.policy.SelectorPolicy() {
			t.write(ep, ep.policy.ConsumeMapChanges(), "")
			continue
		}
		next := sp.DistillPolicy(nil)
		state := next.ConsumeMapState()
		ep.policy.Detach()
		ep.policy = next
		t.write(ep, ep.state.Diff(state), fmt.Sprintf("policy revision %d, %d keys", sp.Revision(), len(state)))
	}
	return nil
}

// syncIdentities writes the changes identity churn made to the map
// states.
func (t *endpointTable) syncIdentities(context.Context, []string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, ep := range t.endpoints {
		t.write(ep, ep.policy.ConsumeMapChanges(), "")
	}
	return nil
}

// write applies changes to the endpoint's map state, as a datapath
// updates its BPF policy map, and prints those that change it (a delete
// of a missing key, or a key added again with the same entry, changes
// nothing). A header, if given, comes first when something changed.
func (t *endpointTable) write(ep *endpoint, ch policy.MapChanges, header string) {
	deleted := make(policy.MapState)
	for _, k := range ch.Deletes {
		if e, ok := ep.state[k]; ok {
			deleted[k] = e
			delete(ep.state, k)
		}
	}
	added := make(policy.MapState)
	for k, e := range ch.Adds {
		if old, ok := ep.state[k]; !ok || old != e {
			added[k] = e
			ep.state[k] = e
		}
	}
	if header != "" && len(deleted)+len(added) > 0 {
		t.out.printf("endpoint %d: %s", ep.spec.ID, header)
	}
	for _, k := range sortedKeys(deleted) {
		t.out.printf("endpoint %d: - %s", ep.spec.ID, formatKey(k, deleted[k]))
	}
	for _, k := range sortedKeys(added) {
		t.out.printf("endpoint %d: + %s", ep.spec.ID, formatKey(k, added[k]))
	}
}
