package identitycache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// crdMaxAttempts bounds how often Allocate picks another id after
// another agent took the one it picked.
const crdMaxAttempts = 16

// CRDAllocator allocates global identities as CiliumIdentity objects
// (identity allocation mode crd). Its cache is every CiliumIdentity of
// the cluster's range, fed by Watch. Allocate is create-or-get: an
// existing identity of the label set is used (the oldest if there are
// duplicates); otherwise it creates one with a random free id (another
// id when the name is taken), then lists the identities of the label
// set from the API server and keeps the oldest, deleting its own when
// another agent created one first, so that agents allocating the same
// labels at once end with one identity. References are not written:
// the CiliumEndpoints that name an identity keep it alive, and the
// garbage collector (CRDGC) deletes the others after a grace period.
type CRDAllocator struct {
	client  dynamic.ResourceInterface
	cluster cluster.Info
	min     allocator.ID
	max     allocator.ID
	events  allocator.Events[*identity.Identity]
	log     *slog.Logger
	keyMu   allocator.KeyMutex

	syncedCh chan struct{}
	resync   chan struct{} // an identity in local use was deleted

	mu       sync.Mutex
	byID     map[allocator.ID]*crdEntry
	byKey    map[string]map[allocator.ID]*crdEntry
	invalid  map[string]error // object name -> why it is skipped
	local    map[string]*localRef
	creating map[allocator.ID]struct{}
	synced   bool
}

type localRef struct {
	id   allocator.ID
	refs int
}

var _ globalBackend = (*CRDAllocator)(nil)

// newCRDAllocator returns an allocator of c's range on the
// ciliumidentities client; events hear of the cache's changes.
func newCRDAllocator(client dynamic.ResourceInterface, c cluster.Info, events allocator.Events[*identity.Identity], log *slog.Logger) *CRDAllocator {
	first, last := identity.ClusterRange(c)
	return &CRDAllocator{client: client, cluster: c, min: allocator.ID(first), max: allocator.ID(last), events: events, log: log,
		syncedCh: make(chan struct{}), resync: make(chan struct{}, 1),
		byID: map[allocator.ID]*crdEntry{}, byKey: map[string]map[allocator.ID]*crdEntry{}, invalid: map[string]error{},
		local: map[string]*localRef{}, creating: map[allocator.ID]struct{}{}}
}

// Synced reports whether the cache has listed the identities once.
func (a *CRDAllocator) Synced() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.synced
}

// WaitForSync waits for the cache's first list.
func (a *CRDAllocator) WaitForSync(ctx context.Context) error {
	select {
	case <-a.syncedCh:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the list of CiliumIdentities: %w", context.Cause(ctx))
	}
}

// LocalID returns the id of a key in local use.
func (a *CRDAllocator) LocalID(key string) (allocator.ID, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.local[key]; ok {
		return l.id, true
	}
	return 0, false
}

// Allocate returns the id of key (a canonical label list), creating a
// CiliumIdentity if none exists, and takes a local reference; isNew is
// true when this call created the identity that is kept.
func (a *CRDAllocator) Allocate(ctx context.Context, key string) (allocator.ID, bool, error) {
	lbls, err := labels.ParseSortedList(key)
	if err != nil || len(lbls) == 0 {
		return 0, false, fmt.Errorf("allocate %q: %w", key, allocator.ErrInvalidKey)
	}
	unlock := a.keyMu.Lock(key)
	defer unlock()
	if id, ok := a.addLocalRef(key); ok {
		return id, false, nil
	}
	if err := a.WaitForSync(ctx); err != nil {
		return 0, false, fmt.Errorf("allocate %q: %w", key, err)
	}
	exclude := map[allocator.ID]struct{}{}
	for range crdMaxAttempts {
		if e := a.oldest(key); e != nil {
			if err := a.acquire(ctx, e); err == nil {
				a.setLocal(key, e.id)
				return e.id, false, nil
			} else if !errors.Is(err, errGone) {
				return 0, false, fmt.Errorf("allocate %q: %w", key, err)
			}
			exclude[e.id] = struct{}{}
		}
		id, isNew, err := a.create(ctx, key, lbls, exclude)
		if errors.Is(err, errLostID) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("allocate %q: %w", key, err)
		}
		a.setLocal(key, id)
		return id, isNew, nil
	}
	return 0, false, fmt.Errorf("allocate %q: every id tried was taken by another agent", key)
}

// Release drops a local reference; last is true for the last one. The
// CiliumIdentity stays: the garbage collector deletes it once unused.
func (a *CRDAllocator) Release(_ context.Context, key string) (bool, error) {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	l, ok := a.local[key]
	if !ok {
		return false, fmt.Errorf("release %q: %w", key, allocator.ErrNotAllocated)
	}
	l.refs--
	if l.refs > 0 {
		return false, nil
	}
	delete(a.local, key)
	return true, nil
}

var (
	// errGone: the identity of the cache no longer exists with its
	// labels.
	errGone = errors.New("identity is gone")
	// errLostID: another agent created an identity with the id picked.
	errLostID = errors.New("id taken by another agent")
)

// acquire makes sure the identity e can be used: it removes the garbage
// collector's mark (the update changes the resource version, so a
// pending deletion fails), and re-creates it when it was deleted.
func (a *CRDAllocator) acquire(ctx context.Context, e *crdEntry) error {
	if !e.marked {
		return nil
	}
	for range 3 {
		obj, err := a.client.Get(ctx, e.id.String(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return a.recreate(ctx, e.id, e.identity.Labels)
		}
		if err != nil {
			return fmt.Errorf("read CiliumIdentity %d: %w", e.id, err)
		}
		if cur, err := newCRDEntry(a.cluster, obj); err != nil || cur.key != e.key {
			return errGone
		}
		ann := obj.GetAnnotations()
		if _, ok := ann[HeartbeatAnnotation]; !ok {
			return nil
		}
		delete(ann, HeartbeatAnnotation)
		obj.SetAnnotations(ann)
		_, err = a.client.Update(ctx, obj, metav1.UpdateOptions{})
		if err == nil {
			a.log.Info("Identity was marked for deletion; unmarked it", "identity", e.id)
			return nil
		}
		if !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			return fmt.Errorf("unmark CiliumIdentity %d: %w", e.id, err)
		}
	}
	return fmt.Errorf("unmark CiliumIdentity %d: it keeps changing", e.id)
}

// recreate creates the identity id with lbls again; errGone when the id
// has meanwhile been taken by other labels.
func (a *CRDAllocator) recreate(ctx context.Context, id allocator.ID, lbls labels.Labels) error {
	_, err := a.client.Create(ctx, NewCiliumIdentity(identity.NumericIdentity(id), lbls), metav1.CreateOptions{})
	if err == nil {
		a.log.Warn("Re-created a deleted identity in local use", "identity", id, "labels", lbls.String())
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("re-create CiliumIdentity %d: %w", id, err)
	}
	obj, err := a.client.Get(ctx, id.String(), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read CiliumIdentity %d: %w", id, err)
	}
	if cur, err := newCRDEntry(a.cluster, obj); err != nil || cur.key != kvstoreKey(lbls) {
		return errGone
	}
	return nil
}

// create creates an identity of key with a free id, then keeps the
// oldest identity of key on the API server.
func (a *CRDAllocator) create(ctx context.Context, key string, lbls labels.Labels, exclude map[allocator.ID]struct{}) (allocator.ID, bool, error) {
	id, err := a.selectID(exclude)
	if err != nil {
		return 0, false, err
	}
	defer a.unreserve(id)
	created, err := a.client.Create(ctx, NewCiliumIdentity(identity.NumericIdentity(id), lbls), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		exclude[id] = struct{}{}
		return 0, false, errLostID
	}
	if err != nil {
		return 0, false, fmt.Errorf("create CiliumIdentity %d: %w", id, err)
	}
	winner, err := a.oldestOnServer(ctx, key, lbls)
	if err != nil || winner == nil || winner.id == id {
		// Unverified (the list failed) or ours: keep ours.
		return id, true, err
	}
	// Another agent created the label set's identity first: use it, and
	// delete ours, which nobody else can have picked (the first one is
	// older, and every watcher sees it before ours).
	uid := created.GetUID()
	err = a.client.Delete(ctx, id.String(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		a.log.Warn("Deleting a duplicate identity failed; the garbage collector will", "identity", id, "error", err)
	}
	a.log.Info("Another agent created the identity first; using it", "identity", winner.id, "duplicate", id)
	if err := a.acquire(ctx, winner); err != nil {
		return 0, false, err
	}
	return winner.id, false, nil
}

// oldestOnServer lists the identities of key from the API server (a
// consistent read, narrowed by the namespace label when there is one)
// and returns the oldest.
func (a *CRDAllocator) oldestOnServer(ctx context.Context, key string, lbls labels.Labels) (*crdEntry, error) {
	opts := metav1.ListOptions{}
	if l, ok := lbls.Get(labels.KeyPodNamespace); ok && l.Source == labels.SourceK8s {
		opts.LabelSelector = crdNamespaceLabel + "=" + l.Value
	}
	list, err := a.client.List(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("list CiliumIdentities to check for duplicates: %w", err)
	}
	var best *crdEntry
	for i := range list.Items {
		e, err := newCRDEntry(a.cluster, &list.Items[i])
		if err != nil || e.key != key {
			continue
		}
		if best == nil || e.olderThan(best) {
			best = e
		}
	}
	return best, nil
}

// selectID picks a random free id: not in the cache, not in local use,
// not being created and not excluded.
func (a *CRDAllocator) selectID(exclude map[allocator.ID]struct{}) (allocator.ID, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	used := map[allocator.ID]struct{}{}
	for _, l := range a.local {
		used[l.id] = struct{}{}
	}
	free := func(id allocator.ID) bool {
		_, inCache := a.byID[id]
		_, creating := a.creating[id]
		_, excluded := exclude[id]
		_, local := used[id]
		return !inCache && !creating && !excluded && !local
	}
	span := uint64(a.max-a.min) + 1
	for range 64 {
		if id := a.min + allocator.ID(rand.Uint64N(span)); free(id) {
			a.creating[id] = struct{}{}
			return id, nil
		}
	}
	start := rand.Uint64N(span)
	for i := range span {
		if id := a.min + allocator.ID((start+i)%span); free(id) {
			a.creating[id] = struct{}{}
			return id, nil
		}
	}
	return 0, fmt.Errorf("%w %d..%d", allocator.ErrNoFreeID, a.min, a.max)
}

func (a *CRDAllocator) unreserve(id allocator.ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.creating, id)
}

func (a *CRDAllocator) addLocalRef(key string) (allocator.ID, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.local[key]; ok {
		l.refs++
		return l.id, true
	}
	return 0, false
}

func (a *CRDAllocator) setLocal(key string, id allocator.ID) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.local[key] = &localRef{id: id, refs: 1}
}

// oldest returns the oldest identity of key in the cache.
func (a *CRDAllocator) oldest(key string) *crdEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	var best *crdEntry
	for _, e := range a.byKey[key] {
		if best == nil || e.olderThan(best) {
			best = e
		}
	}
	return best
}

// SyncLocalKeys re-creates the identities in local use that were
// deleted, and unmarks those the garbage collector marked: it is the
// heartbeat of the identities this agent uses.
func (a *CRDAllocator) SyncLocalKeys(ctx context.Context) error {
	a.mu.Lock()
	local := make(map[string]allocator.ID, len(a.local))
	for k, l := range a.local {
		local[k] = l.id
	}
	a.mu.Unlock()
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(local)) {
		if err := a.syncKey(ctx, key, local[key]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (a *CRDAllocator) syncKey(ctx context.Context, key string, id allocator.ID) error {
	unlock := a.keyMu.Lock(key)
	defer unlock()
	if cur, ok := a.LocalID(key); !ok || cur != id {
		return nil // released or re-allocated meanwhile
	}
	a.mu.Lock()
	e := a.byID[id]
	a.mu.Unlock()
	if e == nil || e.key != key {
		lbls, err := labels.ParseSortedList(key)
		if err != nil {
			return err
		}
		if err := a.recreate(ctx, id, lbls); err != nil {
			return fmt.Errorf("identity %d in local use: %w", id, err)
		}
		return nil
	}
	return a.acquire(ctx, e)
}
