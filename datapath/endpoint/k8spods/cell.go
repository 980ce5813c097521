package k8spods

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/policy/labels"
)

// Cell provides the Source of pod labels and keeps the endpoints' labels
// in step with their pods and namespaces. It needs the Kubernetes client
// cell and the endpoint manager; without Kubernetes it provides no Source
// (nil) and watches nothing.
var Cell = cell.Module("endpoint-k8s-pods", "Endpoint labels from Kubernetes pods and namespaces",
	cell.Provide(newWatcher),
	cell.Invoke(func(Source) {}),
)

// Source gives the labels of a pod of this node.
type Source interface {
	// PodLabels returns the labels of pod namespace/name (see Labels). It
	// waits briefly for a pod the cache does not hold yet (just created).
	PodLabels(ctx context.Context, namespace, name string) (labels.Labels, error)
}

// ErrPodNotFound: the pod is not among this node's pods.
var ErrPodNotFound = errors.New("pod not found on this node")

type watcherParams struct {
	cell.In

	Clientset  k8s.Clientset
	Pods       k8s.Pods
	Namespaces k8s.Namespaces
	Gate       k8s.CacheSync
	Manager    *endpoint.Manager
	Cluster    cluster.Info
	Jobs       job.Group
	Log        *slog.Logger
}

// watcher implements Source and relabels endpoints.
type watcher struct {
	p watcherParams
}

// newWatcher starts the pod and namespace watchers; it returns a nil
// Source without Kubernetes. The endpoints are relabelled once when a
// watcher's initial listing ends, then for each change: not once per
// listed object, which would cost the listing times the endpoints.
func newWatcher(p watcherParams) Source {
	if !p.Clientset.IsEnabled() {
		return nil
	}
	w := &watcher{p: p}
	podsSynced, nsSynced := p.Gate.Register(p.Pods.Name()), p.Gate.Register(p.Namespaces.Name())
	every := func(endpoint.PodName) bool { return true }
	p.Jobs.Add(
		job.OneShot("k8s-watch-pods", func(ctx context.Context, health cell.Health) error {
			listing := true
			for ev := range p.Pods.Events(ctx) {
				switch {
				case ev.Kind == k8s.Sync:
					if listing { // the listing's pods, in one pass
						w.relabel(ctx, every)
						listing = false
					}
					podsSynced()
					health.OK("synced")
				case ev.Kind == k8s.Upsert && !listing:
					w.relabel(ctx, func(pod endpoint.PodName) bool {
						return pod.Namespace == ev.Key.Namespace && pod.Name == ev.Key.Name
					})
				}
			}
			return nil
		}),
		job.OneShot("k8s-watch-namespaces", func(ctx context.Context, health cell.Health) error {
			listing := true
			for ev := range p.Namespaces.Events(ctx) {
				switch {
				case ev.Kind == k8s.Sync:
					if listing {
						w.relabel(ctx, every)
						listing = false
					}
					nsSynced()
					health.OK("synced")
				case ev.Kind == k8s.Upsert && !listing:
					w.relabel(ctx, func(pod endpoint.PodName) bool { return pod.Namespace == ev.Key.Name })
				}
			}
			return nil
		}),
	)
	return w
}

// podWait bounds how long PodLabels waits for a pod to reach the cache.
const podWait = 10 * time.Second

func (w *watcher) PodLabels(ctx context.Context, namespace, name string) (labels.Labels, error) {
	ctx, cancel := context.WithTimeout(ctx, podWait)
	defer cancel()
	pods, err := w.p.Pods.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("labels of pod %s/%s: %w", namespace, name, err)
	}
	for {
		if pod, ok := pods.Get(k8s.Key{Namespace: namespace, Name: name}); ok {
			return w.labels(ctx, pod)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("labels of pod %s/%s: %w", namespace, name, ErrPodNotFound)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// labels computes a pod's labels with its namespace from the cache.
func (w *watcher) labels(ctx context.Context, pod *corev1.Pod) (labels.Labels, error) {
	nss, err := w.p.Namespaces.Store(ctx)
	if err != nil {
		return nil, fmt.Errorf("labels of pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	ns, _ := nss.Get(k8s.Key{Name: pod.Namespace})
	return Labels(pod, ns, w.p.Cluster.ClusterName), nil
}

// relabel gives the endpoints of the pods match selects their pods'
// current labels.
func (w *watcher) relabel(ctx context.Context, match func(endpoint.PodName) bool) {
	var pods k8s.Store[*corev1.Pod]
	for _, ep := range w.p.Manager.Endpoints() {
		if ep.Pod.IsZero() || !match(ep.Pod) {
			continue
		}
		if pods == nil {
			var err error
			if pods, err = w.p.Pods.Store(ctx); err != nil {
				return // stopping
			}
		}
		pod, ok := pods.Get(k8s.Key{Namespace: ep.Pod.Namespace, Name: ep.Pod.Name})
		if !ok {
			continue // deleted: the CNI plugin deletes the endpoint
		}
		ls, err := w.labels(ctx, pod)
		if err == nil {
			_, err = w.p.Manager.UpdateLabels(ctx, ep.ID, ls)
		}
		if err != nil && ctx.Err() == nil {
			w.p.Log.Warn("Updating endpoint labels from its pod", "endpoint", ep.ID, "pod", ep.Pod.String(), "error", err)
		}
	}
}
