package k8s

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/apiary-net/apiary/cells/cell"
)

// Resource is a shared, informer-backed view of one type of Kubernetes
// object. However many cells subscribe, one informer lists and watches
// the type; it starts with the first subscription and stops with the
// hive.
type Resource[T runtime.Object] interface {
	// Name names the API as `apiary status` shows it ("core/v1::Pods").
	Name() string
	// Events streams the objects of the cache as Upserts, then one Sync,
	// then every change, until ctx ends or the hive stops; then the
	// channel is closed. Without Kubernetes it is closed at once.
	Events(ctx context.Context) <-chan Event[T]
	// Store waits until the cache has synced and returns it.
	Store(ctx context.Context) (Store[T], error)
}

// Store is a read-only view of a synced cache.
type Store[T runtime.Object] interface {
	// List returns every object.
	List() []T
	// Get returns the object with key.
	Get(key Key) (T, bool)
	// ByNamespace returns the objects of namespace ns.
	ByNamespace(ns string) []T
}

// resourceSpec says what a resource watches.
type resourceSpec struct {
	// name is the status name, "core/v1::Pods".
	name string
	// object is an empty object of the type the informer holds.
	object runtime.Object
	// listWatch lists and watches the objects.
	listWatch func(Clientset) cache.ListerWatcher
	// crd is set for custom resources: a missing type is a missing CRD.
	crd bool
}

// resource implements Resource[T] with a lazily started informer.
type resource[T runtime.Object] struct {
	spec resourceSpec
	cs   Clientset
	apis *apiRegistry
	log  *slog.Logger

	mu       sync.Mutex
	stopped  bool
	stop     chan struct{}
	informer cache.SharedIndexInformer
	wg       sync.WaitGroup // the informer and the subscriptions
}

var _ Resource[runtime.Object] = (*resource[runtime.Object])(nil)

// newResource returns a resource stopped with the hive.
func newResource[T runtime.Object](spec resourceSpec, cs Clientset, apis *apiRegistry, lc cell.Lifecycle, log *slog.Logger) *resource[T] {
	r := &resource[T]{spec: spec, cs: cs, apis: apis, log: log.With("resource", spec.name), stop: make(chan struct{})}
	lc.Append(cell.Hook{OnStop: func(cell.HookContext) error {
		r.mu.Lock()
		r.stopped = true
		close(r.stop)
		r.mu.Unlock()
		r.wg.Wait()
		return nil
	}})
	return r
}

func (r *resource[T]) Name() string { return r.spec.name }

// informerLocked returns the informer, starting it on first use; nil
// when Kubernetes is disabled or the hive stopped.
func (r *resource[T]) informerLocked() cache.SharedIndexInformer {
	if r.stopped || !r.cs.IsEnabled() {
		return nil
	}
	if r.informer != nil {
		return r.informer
	}
	lw := newTrackedListWatch(r.spec.listWatch(r.cs), r.spec.name, r.apis)
	inf := cache.NewSharedIndexInformer(lw, r.spec.object, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = inf.SetTransform(dropManagedFields)
	_ = inf.SetWatchErrorHandler(func(_ *cache.Reflector, err error) {
		err = r.apis.failed(r.spec.name, r.spec.crd, err)
		r.log.Warn("Listing and watching Kubernetes objects", "error", err)
	})
	r.apis.started(r.spec.name)
	r.informer = inf
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		inf.Run(r.stop)
	}()
	return inf
}

// dropManagedFields saves the memory of the server-side apply
// bookkeeping, which no watcher reads.
func dropManagedFields(obj any) (any, error) {
	if m, ok := obj.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return obj, nil
}

// eventsBuffer is how many events a subscription's channel holds: the
// forwarding goroutine hands a listing over in runs, not one goroutine
// switch per object (a node's agent reads every CiliumEndpoint of the
// cluster).
const eventsBuffer = 64

func (r *resource[T]) Events(ctx context.Context) <-chan Event[T] {
	out := make(chan Event[T], eventsBuffer)
	r.mu.Lock()
	defer r.mu.Unlock()
	inf := r.informerLocked()
	if inf == nil {
		close(out)
		return out
	}
	q := newQueue[Event[T]]()
	reg, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { q.push(r.event(Upsert, obj)) },
		UpdateFunc: func(_, obj any) { q.push(r.event(Upsert, obj)) },
		DeleteFunc: func(obj any) { q.push(r.event(Delete, obj)) },
	})
	if err != nil {
		r.log.Error("Subscribing to Kubernetes objects", "error", err)
		close(out)
		return out
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(out)
		defer func() { _ = inf.RemoveEventHandler(reg) }()
		defer q.close()
		r.forward(ctx, q, reg, out)
	}()
	return out
}

// event makes the event of an informer notification.
func (r *resource[T]) event(kind EventKind, obj any) Event[T] {
	ev := Event[T]{Kind: kind, Key: keyOf(obj)}
	if o, ok := unwrapTombstone(obj).(T); ok {
		ev.Object = o
	}
	return ev
}

// syncPoll is how often a subscription first checks that its initial
// listing has been delivered, and Store that the cache has synced:
// client-go says neither, and the gate opens no sooner than the last
// check. The interval doubles at each check up to maxSyncPoll (a long
// listing is not polled a thousand times a second: a node's agents
// would spend seconds of CPU on it), and the polling stops with the
// sync.
const (
	syncPoll    = time.Millisecond
	maxSyncPoll = 32 * time.Millisecond
)

// forward sends the queued events to out, and Sync once the handler has
// seen the initial listing, until ctx ends or the hive stops.
func (r *resource[T]) forward(ctx context.Context, q *queue[Event[T]], reg cache.ResourceEventHandlerRegistration, out chan<- Event[T]) {
	poll := syncPoll
	tick := time.NewTimer(poll)
	defer tick.Stop()
	synced := false
	for {
		if !synced && reg.HasSynced() {
			// Every event of the listing has been pushed: Sync comes after.
			q.push(Event[T]{Kind: Sync})
			synced = true
			tick.Stop()
		}
		for _, ev := range q.take() {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			case <-r.stop:
				return
			}
		}
		select {
		case <-q.signal:
		case <-tick.C:
			poll = min(2*poll, maxSyncPoll)
			tick.Reset(poll)
		case <-ctx.Done():
			return
		case <-r.stop:
			return
		}
	}
}

func (r *resource[T]) Store(ctx context.Context) (Store[T], error) {
	r.mu.Lock()
	inf := r.informerLocked()
	r.mu.Unlock()
	if inf == nil {
		if !r.cs.IsEnabled() {
			return nil, ErrDisabled
		}
		return nil, fmt.Errorf("store of %s: stopped", r.spec.name)
	}
	poll := syncPoll
	tick := time.NewTimer(poll)
	defer tick.Stop()
	for !inf.HasSynced() {
		select {
		case <-tick.C:
			poll = min(2*poll, maxSyncPoll)
			tick.Reset(poll)
		case <-ctx.Done():
			return nil, fmt.Errorf("wait for the %s cache: %w", r.spec.name, ctx.Err())
		case <-r.stop:
			return nil, fmt.Errorf("store of %s: stopped", r.spec.name)
		}
	}
	return store[T]{inf.GetIndexer()}, nil
}

// store is a Store over an informer's indexer.
type store[T runtime.Object] struct {
	idx cache.Indexer
}

func (s store[T]) List() []T { return typed[T](s.idx.List()) }

func (s store[T]) Get(key Key) (T, bool) {
	obj, ok, _ := s.idx.GetByKey(key.String())
	t, isT := obj.(T)
	return t, ok && isT
}

func (s store[T]) ByNamespace(ns string) []T {
	objs, _ := s.idx.ByIndex(cache.NamespaceIndex, ns)
	return typed[T](objs)
}

func typed[T runtime.Object](objs []any) []T {
	out := make([]T, 0, len(objs))
	for _, o := range objs {
		if t, ok := o.(T); ok {
			out = append(out, t)
		}
	}
	return out
}
