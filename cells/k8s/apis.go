package k8s

import (
	"context"
	"fmt"
	"slices"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// apiRegistry records which APIs the resources list and watch, and the
// last error of each, for the "Kubernetes APIs" status line.
type apiRegistry struct {
	mu   sync.Mutex
	apis map[string]error // name -> last error (nil: working)
}

func newAPIRegistry() *apiRegistry { return &apiRegistry{apis: map[string]error{}} }

func (a *apiRegistry) started(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apis[name] = nil
}

// failed records err as the last error of API name and returns it,
// saying why: forbidden, CRD missing, unauthorized or unreachable.
func (a *apiRegistry) failed(name string, crd bool, err error) error {
	err = classify(name, crd, err)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.apis[name] = err
	return err
}

func (a *apiRegistry) ok(name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.apis[name] != nil {
		a.apis[name] = nil
	}
}

// snapshot returns the names, sorted, and the errors of the failing ones.
func (a *apiRegistry) snapshot() ([]string, []error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var (
		names []string
		errs  []error
	)
	for n := range a.apis {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := a.apis[n]; err != nil {
			errs = append(errs, err)
		}
	}
	return names, errs
}

// classify says which resource failed and why.
func classify(name string, crd bool, err error) error {
	var why string
	switch {
	case apierrors.IsForbidden(err):
		why = "forbidden (RBAC)"
	case apierrors.IsUnauthorized(err):
		why = "unauthorized"
	case apierrors.IsNotFound(err) && crd:
		why = "CRD missing"
	case apierrors.IsNotFound(err):
		why = "API missing"
	case apierrors.IsResourceExpired(err) || apierrors.IsGone(err):
		why = "watch expired"
	case apierrors.ReasonForError(err) == metav1.StatusReasonUnknown:
		why = "unreachable"
	default:
		why = string(apierrors.ReasonForError(err))
	}
	return fmt.Errorf("list and watch %s: %s: %w", name, why, err)
}

// trackedListWatch marks its API working after each successful list or
// watch.
type trackedListWatch struct {
	lw   cache.ListerWatcherWithContext
	name string
	apis *apiRegistry
}

var _ cache.ListerWatcherWithContext = (*trackedListWatch)(nil)

func newTrackedListWatch(lw cache.ListerWatcher, name string, apis *apiRegistry) *trackedListWatch {
	return &trackedListWatch{lw: cache.ToListerWatcherWithContext(lw), name: name, apis: apis}
}

func (t *trackedListWatch) ListWithContext(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	obj, err := t.lw.ListWithContext(ctx, opts)
	if err == nil {
		t.apis.ok(t.name)
	}
	return obj, err
}

func (t *trackedListWatch) WatchWithContext(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	w, err := t.lw.WatchWithContext(ctx, opts)
	if err == nil {
		t.apis.ok(t.name)
	}
	return w, err
}

// List and Watch are the context-less forms the informer's constructor
// asks for; the informer calls the ones with a context.
func (t *trackedListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	return t.ListWithContext(context.Background(), opts)
}

func (t *trackedListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return t.WatchWithContext(context.Background(), opts)
}
