package identitycache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/policy/identity"
)

// CRDGC collects the CiliumIdentities nobody uses, as Cilium's operator
// does in mode crd: an identity is used while a CiliumEndpoint names it
// (status.identity.id) or this agent holds it. One unused for the grace
// period (Cilium's --identity-heartbeat-timeout), counted from when this
// collector last saw it used or first saw it at all, is marked with
// HeartbeatAnnotation; one still marked and unused at the next round is
// deleted with its resource version as a precondition, so that an agent
// that took it meanwhile (and removed the mark) keeps it. One agent at
// a time runs it (the holder of a Lease); a new holder starts counting
// afresh.
type CRDGC struct {
	alloc *CRDAllocator
	grace time.Duration
	log   *slog.Logger

	seen map[allocator.ID]time.Time // when last seen used, or first seen
}

// GCStats count what a round did.
type GCStats struct {
	Marked, Deleted int
}

// NewCRDGC returns the collector of a's identities.
func NewCRDGC(a *CRDAllocator, grace time.Duration, log *slog.Logger) *CRDGC {
	return &CRDGC{alloc: a, grace: grace, log: log, seen: map[allocator.ID]time.Time{}}
}

// Reset forgets when identities were seen used: the collector stopped
// leading, and whoever leads next counts afresh.
func (g *CRDGC) Reset() { clear(g.seen) }

// Round runs one round at now; used are the identities the
// CiliumEndpoints name. The cache must have synced.
func (g *CRDGC) Round(ctx context.Context, now time.Time, used map[identity.NumericIdentity]struct{}) (GCStats, error) {
	var stats GCStats
	if !g.alloc.Synced() {
		return stats, errors.New("identity GC: the CiliumIdentity cache has not synced")
	}
	entries, local := g.alloc.snapshot()
	present := make(map[allocator.ID]struct{}, len(entries))
	var errs []error
	for _, e := range entries {
		present[e.id] = struct{}{}
		_, byCEP := used[identity.NumericIdentity(e.id)]
		_, byUs := local[e.id]
		last, ok := g.seen[e.id]
		switch {
		case byCEP || byUs || !ok:
			g.seen[e.id] = now
		case now.Sub(last) < g.grace:
		case !e.marked:
			if err := g.mark(ctx, e, now); err != nil {
				errs = append(errs, err)
			} else {
				stats.Marked++
			}
		default:
			deleted, err := g.delete(ctx, e)
			if err != nil {
				errs = append(errs, err)
			} else if deleted {
				stats.Deleted++
			}
		}
	}
	for id := range g.seen {
		if _, ok := present[id]; !ok {
			delete(g.seen, id)
		}
	}
	return stats, errors.Join(errs...)
}

// mark sets HeartbeatAnnotation, unless the identity changed since the
// cache saw it.
func (g *CRDGC) mark(ctx context.Context, e *crdEntry, now time.Time) error {
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`,
		e.resourceVersion, HeartbeatAnnotation, now.UTC().Format(time.RFC3339Nano))
	_, err := g.alloc.client.Patch(ctx, e.id.String(), types.MergePatchType, patch, metav1.PatchOptions{})
	switch {
	case err == nil:
		g.log.Info("Marked an unused identity for deletion", "identity", e.id, "labels", e.identity.Labels.String())
		return nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return nil
	}
	return fmt.Errorf("mark CiliumIdentity %d: %w", e.id, err)
}

// delete deletes a marked identity if it is as the cache saw it.
func (g *CRDGC) delete(ctx context.Context, e *crdEntry) (bool, error) {
	uid, rv := types.UID(e.uid), e.resourceVersion
	err := g.alloc.client.Delete(ctx, e.id.String(), metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	switch {
	case err == nil:
		g.log.Info("Deleted an unused identity", "identity", e.id, "labels", e.identity.Labels.String())
		delete(g.seen, e.id)
		return true, nil
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		return false, nil
	}
	return false, fmt.Errorf("delete CiliumIdentity %d: %w", e.id, err)
}

// snapshot returns the cache's entries and the ids in local use.
func (a *CRDAllocator) snapshot() ([]*crdEntry, map[allocator.ID]struct{}) {
	a.mu.Lock()
	defer a.mu.Unlock()
	entries := make([]*crdEntry, 0, len(a.byID))
	for _, e := range a.byID {
		entries = append(entries, e)
	}
	local := make(map[allocator.ID]struct{}, len(a.local))
	for _, l := range a.local {
		local[l.id] = struct{}{}
	}
	return entries, local
}

// IdentitiesOfEndpoints returns the identities CiliumEndpoints name in
// status.identity.id.
func IdentitiesOfEndpoints(ceps []*unstructured.Unstructured) map[identity.NumericIdentity]struct{} {
	out := make(map[identity.NumericIdentity]struct{}, len(ceps))
	for _, cep := range ceps {
		if id, ok, _ := unstructured.NestedInt64(cep.Object, "status", "identity", "id"); ok && id > 0 {
			out[identity.NumericIdentity(id)] = struct{}{}
		}
	}
	return out
}
