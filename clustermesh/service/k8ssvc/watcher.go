package k8ssvc

import (
	"context"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/svcpublish"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// watcher joins the Services and their EndpointSlices.
type watcher struct {
	cache   *service.Cache
	writer  *svcpublish.Writer // nil: no kvstore
	cluster cluster.Info
	// manager gets every service with its slices (nil: no service
	// manager in the hive).
	manager *svcmanager.Manager
	// conv parses each Service and slice once for the manager.
	conv *svcmanager.Converter

	services map[k8s.Key]*corev1.Service
	slices   map[k8s.Key]map[string]*discoveryv1.EndpointSlice // service -> slice name -> slice
	owner    map[k8s.Key]k8s.Key                               // slice -> its service
}

func newWatcher(cache *service.Cache, w *svcpublish.Writer, cluster cluster.Info, m *svcmanager.Manager) *watcher {
	return &watcher{cache: cache, writer: w, cluster: cluster, manager: m, conv: svcmanager.NewConverter(),
		services: map[k8s.Key]*corev1.Service{},
		slices:   map[k8s.Key]map[string]*discoveryv1.EndpointSlice{},
		owner:    map[k8s.Key]k8s.Key{}}
}

// run applies the events of both streams until they are closed (ctx
// ended); onSynced is called once both have sent Sync and the listings
// are applied.
func (w *watcher) run(ctx context.Context, svcs <-chan k8s.Event[*corev1.Service],
	eps <-chan k8s.Event[*discoveryv1.EndpointSlice], onSynced func()) {
	svcSynced, epSynced, done := false, false, false
	for svcs != nil || eps != nil {
		select {
		case ev, ok := <-svcs:
			if !ok {
				svcs = nil
				continue
			}
			switch ev.Kind {
			case k8s.Sync:
				svcSynced = true
			case k8s.Upsert:
				w.services[ev.Key] = ev.Object
				w.refresh(ev.Key)
			case k8s.Delete:
				w.serviceDelete(ev.Key)
			}
		case ev, ok := <-eps:
			if !ok {
				eps = nil
				continue
			}
			switch ev.Kind {
			case k8s.Sync:
				epSynced = true
			case k8s.Upsert:
				w.sliceUpsert(ev.Key, ev.Object)
			case k8s.Delete:
				w.sliceDelete(ev.Key)
			}
		case <-ctx.Done():
			return
		}
		if svcSynced && epSynced && !done {
			done = true
			onSynced()
		}
	}
}

// serviceDelete removes a Service and refreshes it (its slices stay,
// for when it comes back).
func (w *watcher) serviceDelete(key k8s.Key) {
	delete(w.services, key)
	w.conv.ForgetService(key.Namespace, key.Name)
	w.refresh(key)
}

// sliceUpsert files a slice under its service (label
// kubernetes.io/service-name) and refreshes the services it left and
// joined.
func (w *watcher) sliceUpsert(key k8s.Key, sl *discoveryv1.EndpointSlice) {
	svc := k8s.Key{Namespace: key.Namespace, Name: sl.Labels[discoveryv1.LabelServiceName]}
	if old, ok := w.owner[key]; ok && old != svc {
		w.sliceDelete(key)
	}
	if svc.Name == "" {
		return
	}
	w.owner[key] = svc
	bySlice := w.slices[svc]
	if bySlice == nil {
		bySlice = map[string]*discoveryv1.EndpointSlice{}
		w.slices[svc] = bySlice
	}
	bySlice[key.Name] = sl
	w.refresh(svc)
}

// sliceDelete removes a slice and refreshes its service.
func (w *watcher) sliceDelete(key k8s.Key) {
	svc, ok := w.owner[key]
	if !ok {
		return
	}
	delete(w.owner, key)
	delete(w.slices[svc], key.Name)
	if len(w.slices[svc]) == 0 {
		delete(w.slices, svc)
	}
	w.refresh(svc)
}

// refresh hands the service at key to the service manager, and puts it
// in the cache and the writer, or withdraws it when it is gone or not
// global.
func (w *watcher) refresh(key k8s.Key) {
	nn := key.Namespace + "/" + key.Name
	svc, ok := w.services[key]
	var eps []*discoveryv1.EndpointSlice
	if ok {
		eps = make([]*discoveryv1.EndpointSlice, 0, len(w.slices[key]))
		for _, name := range sortedKeys(w.slices[key]) {
			eps = append(eps, w.slices[key][name])
		}
	}
	w.toManager(nn, svc, eps)
	if !ok || !IsGlobal(svc) {
		w.cache.Delete(w.cluster.ClusterName, nn)
		w.publish(nn, nil)
		return
	}
	cs := Convert(svc, eps, w.cluster)
	w.cache.UpsertLocal(cs)
	if cs.Shared {
		w.publish(nn, cs)
	} else {
		w.publish(nn, nil)
	}
}

func (w *watcher) publish(nn string, cs *service.ClusterService) {
	if w.writer != nil {
		w.writer.Set(nn, cs)
	}
}

// toManager hands the service (nil: gone) to the service manager.
func (w *watcher) toManager(nn string, svc *corev1.Service, eps []*discoveryv1.EndpointSlice) {
	if w.manager == nil {
		return
	}
	if svc != nil {
		if s := w.conv.Convert(svc, eps); s != nil {
			w.manager.Upsert(svcmanager.SourceKubernetes, s)
			return
		}
	}
	w.manager.Delete(svcmanager.SourceKubernetes, nn)
}

func sortedKeys(m map[string]*discoveryv1.EndpointSlice) []string {
	return slices.Sorted(maps.Keys(m))
}
