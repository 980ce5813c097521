package k8ssvc

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/svcpublish"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// Watcher joins the Services and their EndpointSlices for the service
// manager (every service), the global service cache and the writer (the
// global ones), as the agent's watch does; a library user that runs its
// own informers hands it their events (Service, EndpointSlice). Nothing
// is handed on before both initial listings are in (Synced): then every
// service is handed on once with all its slices, not once per event
// (a service of ten slices would otherwise be converted eleven times,
// each time with all its slices so far). After that an EndpointSlice
// change costs one lookup (the slice's service, whose state holds its
// Service, its other slices and its name) and, for a service that is
// not global, allocates nothing. Not safe for concurrent use.
type Watcher struct {
	cache   *service.Cache
	writer  *svcpublish.Writer // nil: no kvstore
	cluster cluster.Info
	// manager gets every service with its slices (nil: no service
	// manager in the hive).
	manager *svcmanager.Manager
	// conv parses each Service and slice once for the manager.
	conv *svcmanager.Converter

	services map[k8s.Key]*serviceState
	owner    map[k8s.Key]*serviceState // slice -> its service's
	eps      []*discoveryv1.EndpointSlice
	// svcSynced and epSynced: that stream's initial listing is in;
	// synced: both are, and every service was handed on.
	svcSynced, epSynced, synced bool
}

// serviceState is what the watcher knows of one service: the Service
// (nil: none yet, or deleted) and its slices (which may come first).
type serviceState struct {
	key k8s.Key
	nn  string // namespace/name
	svc *corev1.Service
	// isGlobal is IsGlobal(svc), read when svc is set: a slice change
	// does not read the Service.
	isGlobal bool
	slices   []namedSlice  // sorted by name
	one      [1]namedSlice // slices' room while there is one (most services)
	// global: the last refresh put the service in the cache (and the
	// writer) as a global service, so it withdraws it when it is no
	// longer one.
	global bool
	// slot is what the converter keeps of the service.
	slot svcmanager.Slot
}

type namedSlice struct {
	name string
	sl   *discoveryv1.EndpointSlice
}

// NewWatcher returns a watcher handing services to m (nil: none), and
// the global ones to cache and, when w is not nil, to w.
func NewWatcher(cache *service.Cache, w *svcpublish.Writer, cluster cluster.Info, m *svcmanager.Manager) *Watcher {
	return &Watcher{cache: cache, writer: w, cluster: cluster, manager: m, conv: svcmanager.NewConverter(),
		services: map[k8s.Key]*serviceState{}, owner: map[k8s.Key]*serviceState{}}
}

// state returns the state of the service at key, a new one if there is
// none.
func (w *Watcher) state(key k8s.Key) *serviceState {
	st := w.services[key]
	if st == nil {
		st = &serviceState{key: key, nn: key.Namespace + "/" + key.Name}
		w.services[key] = st
	}
	return st
}

// forget drops st when nothing of it is left.
func (w *Watcher) forget(st *serviceState) {
	if st.svc == nil && len(st.slices) == 0 && !st.global {
		delete(w.services, st.key)
	}
}

// run applies the events of both streams until they are closed (ctx
// ended); onSynced is called once both have sent Sync and the listings
// are applied.
func (w *Watcher) run(ctx context.Context, svcs <-chan k8s.Event[*corev1.Service],
	eps <-chan k8s.Event[*discoveryv1.EndpointSlice], onSynced func()) {
	done := false
	for svcs != nil || eps != nil {
		select {
		case ev, ok := <-svcs:
			if !ok {
				svcs = nil
				continue
			}
			w.Service(ev)
		case ev, ok := <-eps:
			if !ok {
				eps = nil
				continue
			}
			w.EndpointSlice(ev)
		case <-ctx.Done():
			return
		}
		if w.synced && !done {
			done = true
			onSynced()
		}
	}
}

// Service applies an event of the Services' stream.
func (w *Watcher) Service(ev k8s.Event[*corev1.Service]) {
	switch ev.Kind {
	case k8s.Sync:
		w.svcSynced = true
		w.sync()
	case k8s.Upsert:
		st := w.state(ev.Key)
		st.svc, st.isGlobal = ev.Object, IsGlobal(ev.Object)
		w.refresh(st)
	case k8s.Delete:
		w.serviceDelete(ev.Key)
	}
}

// EndpointSlice applies an event of the EndpointSlices' stream.
func (w *Watcher) EndpointSlice(ev k8s.Event[*discoveryv1.EndpointSlice]) {
	switch ev.Kind {
	case k8s.Sync:
		w.epSynced = true
		w.sync()
	case k8s.Upsert:
		w.sliceUpsert(ev.Key, ev.Object)
	case k8s.Delete:
		w.sliceDelete(ev.Key)
	}
}

// Synced reports whether both initial listings are in and every service
// was handed on.
func (w *Watcher) Synced() bool { return w.synced }

// sync hands every service on, in the order of their names, once both
// listings are in.
func (w *Watcher) sync() {
	if w.synced || !w.svcSynced || !w.epSynced {
		return
	}
	w.synced = true
	all := slices.SortedFunc(maps.Values(w.services), func(a, b *serviceState) int {
		return cmp.Or(strings.Compare(a.key.Namespace, b.key.Namespace), strings.Compare(a.key.Name, b.key.Name))
	})
	for _, st := range all {
		w.refresh(st)
	}
}

// serviceDelete removes a Service and refreshes it (its slices stay,
// for when it comes back).
func (w *Watcher) serviceDelete(key k8s.Key) {
	st := w.services[key]
	if st == nil {
		return
	}
	st.svc, st.isGlobal = nil, false
	st.slot = svcmanager.Slot{}
	w.refresh(st)
	w.forget(st)
}

// sliceUpsert files a slice under its service (label
// kubernetes.io/service-name) and refreshes the services it left and
// joined. A slice found among its service's costs no lookup of its
// owner.
func (w *Watcher) sliceUpsert(key k8s.Key, sl *discoveryv1.EndpointSlice) {
	name := sl.Labels[discoveryv1.LabelServiceName]
	if name == "" {
		w.sliceDelete(key)
		return
	}
	st := w.state(k8s.Key{Namespace: key.Namespace, Name: name})
	i, found := slices.BinarySearchFunc(st.slices, key.Name, func(x namedSlice, n string) int { return strings.Compare(x.name, n) })
	if found {
		st.slices[i].sl = sl
	} else {
		if old := w.owner[key]; old != nil { // moved from another service
			w.sliceDelete(key)
		}
		w.owner[key] = st
		if st.slices == nil {
			st.slices = st.one[:0]
		}
		st.slices = slices.Insert(st.slices, i, namedSlice{name: key.Name, sl: sl})
	}
	w.refresh(st)
}

// sliceDelete removes a slice and refreshes its service.
func (w *Watcher) sliceDelete(key k8s.Key) {
	st := w.owner[key]
	if st == nil {
		return
	}
	delete(w.owner, key)
	st.slices = slices.DeleteFunc(st.slices, func(x namedSlice) bool { return x.name == key.Name })
	w.refresh(st)
	w.forget(st)
}

// refresh hands the service of st to the service manager, and puts it
// in the cache and the writer when it is global, or withdraws it when
// it was and is gone or no longer global.
func (w *Watcher) refresh(st *serviceState) {
	if !w.synced {
		return // sync hands it on
	}
	var eps []*discoveryv1.EndpointSlice
	if st.svc != nil {
		eps = w.eps[:0]
		for _, x := range st.slices {
			eps = append(eps, x.sl)
		}
		w.eps = eps
		defer clear(eps) // no slice kept alive by the room (past it: cleared before)
	}
	w.toManager(st, eps)
	if !st.isGlobal {
		if st.global {
			st.global = false
			w.cache.Delete(w.cluster.ClusterName, st.nn)
			w.publish(st.nn, nil)
		}
		return
	}
	st.global = true
	cs := Convert(st.svc, eps, w.cluster)
	w.cache.UpsertLocal(cs)
	if cs.Shared {
		w.publish(st.nn, cs)
	} else {
		w.publish(st.nn, nil)
	}
}

func (w *Watcher) publish(nn string, cs *service.ClusterService) {
	if w.writer != nil {
		w.writer.Set(nn, cs)
	}
}

// toManager hands the service of st (nil: gone), with its slices eps,
// to the service manager.
func (w *Watcher) toManager(st *serviceState, eps []*discoveryv1.EndpointSlice) {
	if w.manager == nil {
		return
	}
	if st.svc != nil {
		if s := w.conv.ConvertIn(&st.slot, st.svc, eps); s != nil {
			w.manager.Upsert(svcmanager.SourceKubernetes, s)
			return
		}
	}
	w.manager.Delete(svcmanager.SourceKubernetes, st.nn)
}
