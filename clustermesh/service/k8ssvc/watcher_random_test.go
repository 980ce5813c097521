package k8ssvc

import (
	"cmp"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

// The random test's world: two namespaces, each with four service names
// and six slice names (8 services, 12 slice keys in all).
var (
	randomNamespaces = []string{"default", "team"}
	randomServices   = []string{"api", "db", "web", "cache"}
	randomSlices     = []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	randomNode       = svcmanager.Node{Name: "n1"}
	randomCluster    = cluster.Info{ClusterName: "c1", ClusterID: 1}
)

const (
	randomSeeds = 20
	randomSteps = 800
)

// TestWatcherRandom: fed random Service and EndpointSlice events
// (upserts, deletions, slices moving between services or losing their
// label, the two Syncs at random steps), the watcher leaves the
// manager, its writer and the global service cache holding, after
// every step, what a plain model of the objects says: nothing before
// both Syncs; after them, every Service with the slices that name it,
// the global ones in the cache, and no state left behind in the watcher.
func TestWatcherRandom(t *testing.T) {
	for seed := range uint64(randomSeeds) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			run := newRandomRun(t, seed)
			for run.step = range randomSteps {
				run.next()
				run.check()
			}
			if !run.w.Synced() {
				t.Fatalf("seed %d: the watcher never synced", seed)
			}
		})
	}
}

// randomRun is one seed's run: the watcher under test, what it feeds,
// and the model of the objects the informers would hold.
type randomRun struct {
	t       *testing.T
	r       *rand.Rand
	seed    uint64
	step    int
	action  string // what the current step did, for failure messages
	version int    // the last ResourceVersion handed out

	svcs   map[k8s.Key]*corev1.Service
	slices map[k8s.Key]*discoveryv1.EndpointSlice
	// svcSyncAt and epSyncAt are the steps that send each stream's Sync.
	svcSyncAt, epSyncAt int
	reconciled          bool
	// early counts the changes the manager saw before the watcher synced.
	early int
	// rendered keeps each service's wanted frontends with the objects
	// they were made of: most steps change one service, and rendering
	// every service's again each step would take most of the run.
	rendered map[k8s.Key]renderedService

	w      *Watcher
	m      *svcmanager.Manager
	writer *svcmanagertest.Writer
	cache  *service.Cache
}

func newRandomRun(t *testing.T, seed uint64) *randomRun {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	run := &randomRun{t: t, r: r, seed: seed,
		svcs: map[k8s.Key]*corev1.Service{}, slices: map[k8s.Key]*discoveryv1.EndpointSlice{},
		rendered: map[k8s.Key]renderedService{},
		// Some seeds sync at once, most after an initial listing of
		// some length, each stream on its own.
		svcSyncAt: r.IntN(randomSteps / 4), epSyncAt: r.IntN(randomSteps / 4),
		writer: svcmanagertest.New(), cache: service.NewCache()}
	run.m = svcmanager.New(run.writer, randomNode, slog.New(slog.DiscardHandler))
	run.m.Observe(func(svcmanager.Change) {
		if !run.w.Synced() {
			run.early++
		}
	}, svcmanager.SourceKubernetes)
	run.w = NewWatcher(run.cache, nil, randomCluster, run.m)
	return run
}

// next applies one random event (or a stream's Sync when its step has
// come), and reconciles the manager once the watcher has synced, as the
// agent does.
func (run *randomRun) next() {
	var syncs []string // both when their steps fall together
	if run.step == run.svcSyncAt {
		syncs = append(syncs, "Services Sync")
		run.w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Sync})
	}
	if run.step == run.epSyncAt {
		syncs = append(syncs, "EndpointSlices Sync")
		run.w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Sync})
	}
	if syncs != nil {
		run.action = strings.Join(syncs, ", ")
	} else {
		run.randomEvent()
	}
	if run.w.Synced() && !run.reconciled {
		run.reconciled = true
		if err := run.m.Reconcile(); err != nil {
			run.fatalf("reconcile: %v", err)
		}
	}
}

// randomEvent upserts or deletes a random Service or slice; slices
// change more often than Services, as in a cluster.
func (run *randomRun) randomEvent() {
	switch n := run.r.IntN(10); {
	case n < 2:
		run.upsertService()
	case n < 3:
		run.deleteService()
	case n < 9:
		run.upsertSlice()
	default:
		run.deleteSlice()
	}
}

// nextVersion returns a ResourceVersion no object had before.
func (run *randomRun) nextVersion() string {
	run.version++
	return fmt.Sprint(run.version)
}

// upsertService sends a new version of a random Service: global or not,
// its ClusterIP and ports fixed by its name, so that no two services
// claim one frontend.
func (run *randomRun) upsertService() {
	ns, i := run.r.IntN(len(randomNamespaces)), run.r.IntN(len(randomServices))
	var annotations map[string]string
	switch run.r.IntN(4) {
	case 0:
		annotations = map[string]string{AnnotationGlobal: "true"}
	case 1:
		annotations = map[string]string{AnnotationGlobal: "true", AnnotationShared: "false"}
	case 2:
		annotations = map[string]string{AnnotationGlobal: "false"}
	}
	ev := testService(randomServices[i], fmt.Sprintf("10.96.%d.%d", ns, i+1), annotations)
	ev.Key.Namespace, ev.Object.Namespace = randomNamespaces[ns], randomNamespaces[ns]
	ev.Object.ResourceVersion = run.nextVersion()
	ev.Object.Spec.Ports[0].Port = int32(80 + i)
	if i%2 == 1 { // a second port, which the slices' unnamed port serves too
		ev.Object.Spec.Ports = append(ev.Object.Spec.Ports, corev1.ServicePort{Name: "metrics", Port: int32(9090 + i)})
	}
	run.action = fmt.Sprintf("upsert Service %s (annotations %v)", ev.Key, annotations)
	run.svcs[ev.Key] = ev.Object
	run.w.Service(ev)
}

// deleteService deletes a random Service the model holds (none: it
// upserts one instead).
func (run *randomRun) deleteService() {
	key, ok := pick(run.r, run.svcs)
	if !ok {
		run.upsertService()
		return
	}
	run.action = "delete Service " + key.String()
	last := run.svcs[key]
	delete(run.svcs, key)
	run.w.Service(k8s.Event[*corev1.Service]{Kind: k8s.Delete, Key: key, Object: last})
}

// upsertSlice sends a new version of a random slice: 0 to 4 endpoints
// (some not ready) of addresses only that slice uses, labelled with a
// random service of its namespace (so slices move between services) or,
// rarely, with none.
func (run *randomRun) upsertSlice() {
	ns, i := run.r.IntN(len(randomNamespaces)), run.r.IntN(len(randomSlices))
	owner := randomServices[run.r.IntN(len(randomServices))]
	var addrs []string
	base := run.r.IntN(200)
	for j := range run.r.IntN(5) {
		addrs = append(addrs, fmt.Sprintf("10.%d.%d.%d", ns+1, i, base+j+1))
	}
	ev := testSlice(randomSlices[i], owner, run.nextVersion(), addrs...)
	ev.Key.Namespace, ev.Object.Namespace = randomNamespaces[ns], randomNamespaces[ns]
	for j := range ev.Object.Endpoints {
		if run.r.IntN(5) == 0 {
			ready := false
			ev.Object.Endpoints[j].Conditions.Ready = &ready
		}
	}
	if run.r.IntN(10) == 0 {
		owner = ""
		delete(ev.Object.Labels, discoveryv1.LabelServiceName)
	}
	run.action = fmt.Sprintf("upsert slice %s of service %q with %v", ev.Key, owner, addrs)
	run.slices[ev.Key] = ev.Object
	run.w.EndpointSlice(ev)
}

// deleteSlice deletes a random slice the model holds, the event
// carrying its last known state (none: it upserts one instead).
func (run *randomRun) deleteSlice() {
	key, ok := pick(run.r, run.slices)
	if !ok {
		run.upsertSlice()
		return
	}
	run.action = "delete slice " + key.String()
	last := run.slices[key]
	delete(run.slices, key)
	run.w.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Delete, Key: key, Object: last})
}

// pick returns a random key of m, chosen from its sorted keys so that a
// seed always makes the same run.
func pick[V any](r *rand.Rand, m map[k8s.Key]V) (k8s.Key, bool) {
	if len(m) == 0 {
		return k8s.Key{}, false
	}
	keys := sortedKeys(m)
	return keys[r.IntN(len(keys))], true
}

func sortedKeys[V any](m map[k8s.Key]V) []k8s.Key {
	keys := make([]k8s.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b k8s.Key) int {
		return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return keys
}

// fatalf fails the run, naming the seed, the step and what it did.
func (run *randomRun) fatalf(format string, args ...any) {
	run.t.Helper() // the line of the check that failed
	run.t.Fatalf("seed %d, step %d (%s): %s", run.seed, run.step, run.action, fmt.Sprintf(format, args...))
}

// check compares the watcher's outputs with the model after a step.
func (run *randomRun) check() {
	both := run.step >= run.svcSyncAt && run.step >= run.epSyncAt
	if run.w.Synced() != both {
		run.fatalf("the watcher reports synced %v, want %v", run.w.Synced(), both)
	}
	if !both {
		run.checkNothingYet()
		return
	}
	owned := run.slicesByService()
	want := run.wantFrontends(owned)
	run.checkManager(want)
	run.checkWriter(want)
	run.checkCache(owned)
	run.checkWatcherState(owned)
}

// checkNothingYet: before both Syncs nothing reaches the manager, its
// writer or the cache.
func (run *randomRun) checkNothingYet() {
	if run.early != 0 || len(run.m.Frontends()) != 0 || len(run.writer.Dump()) != 0 || run.cache.Len() != 0 {
		run.fatalf("before both Syncs the manager saw %d changes and holds %d frontends, the writer %d, the cache %d services; want none",
			run.early, len(run.m.Frontends()), len(run.writer.Dump()), run.cache.Len())
	}
}

// slicesByService returns the model's labelled slices by the service
// they name, each service's sorted by name (the order the watcher hands
// them on in).
func (run *randomRun) slicesByService() map[k8s.Key][]*discoveryv1.EndpointSlice {
	out := map[k8s.Key][]*discoveryv1.EndpointSlice{}
	for _, k := range sortedKeys(run.slices) {
		sl := run.slices[k]
		if name := sl.Labels[discoveryv1.LabelServiceName]; name != "" {
			key := k8s.Key{Namespace: k.Namespace, Name: name}
			out[key] = append(out[key], sl)
		}
	}
	return out
}

// wantFrontends renders what the manager should hold, by service, of
// the model's Services and their slices (owned).
func (run *randomRun) wantFrontends(owned map[k8s.Key][]*discoveryv1.EndpointSlice) map[string][]string {
	want := map[string][]string{}
	for key, svc := range run.svcs {
		r := run.rendered[key]
		if r.svc != svc || !slices.Equal(r.slices, owned[key]) {
			r = renderedService{svc: svc, slices: owned[key]}
			for _, lb := range svcmanager.Desired(svcmanager.FromKubernetes(svc, owned[key]), nil, randomNode) {
				r.frontends = append(r.frontends, svcmanagertest.Render(lb))
			}
			run.rendered[key] = r
		}
		want[key.String()] = r.frontends
	}
	return want
}

// renderedService is what a service's frontends were rendered from
// (each object is new in every version: equal pointers, equal objects).
type renderedService struct {
	svc       *corev1.Service
	slices    []*discoveryv1.EndpointSlice
	frontends []string
}

// checkManager: the manager holds, for every Service, the frontends
// and backends Desired makes of it and its slices, and nothing of
// services without a Service.
func (run *randomRun) checkManager(want map[string][]string) {
	got := map[string][]string{}
	for _, e := range run.m.Frontends() {
		got[e.Name] = append(got[e.Name], svcmanagertest.Render(e.LBService))
	}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			run.fatalf("the manager holds for %s\n  %s\nwant\n  %s", name, strings.Join(got[name], "\n  "), strings.Join(w, "\n  "))
		}
	}
	for name, g := range got {
		if _, ok := want[name]; !ok {
			run.fatalf("the manager holds frontends of %s, which has no Service: %q", name, g)
		}
	}
	if st := run.m.Stats(); st.Conflicts != 0 {
		run.fatalf("the manager counts %d conflicting frontends, want none (the services' ClusterIPs differ)", st.Conflicts)
	}
}

// checkWriter: the writer holds exactly every service's desired
// frontends.
func (run *randomRun) checkWriter(bySvc map[string][]string) {
	var want []string
	for _, fes := range bySvc {
		want = append(want, fes...)
	}
	slices.Sort(want)
	if got := run.writer.Dump(); !slices.Equal(got, want) {
		run.fatalf("the writer holds\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// checkCache: the cache holds the global services, each as Convert makes
// it of its Service and slices, and no other.
func (run *randomRun) checkCache(owned map[k8s.Key][]*discoveryv1.EndpointSlice) {
	globals := 0
	for _, ns := range randomNamespaces {
		for _, name := range randomServices {
			key := k8s.Key{Namespace: ns, Name: name}
			got := run.cache.Get(key.String())
			svc := run.svcs[key]
			if svc == nil || !IsGlobal(svc) {
				if len(got) != 0 {
					run.fatalf("the cache holds %s, which is not a global service", key)
				}
				continue
			}
			globals++
			want := Convert(svc, owned[key], randomCluster)
			if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
				run.fatalf("the cache holds for global service %s %s, want %s", key, describe(got), describe([]*service.ClusterService{want}))
			}
		}
	}
	if n := run.cache.Len(); n != globals {
		run.fatalf("the cache holds %d services, want the %d global ones", n, globals)
	}
}

// describe renders cluster services for a failure message.
func describe(css []*service.ClusterService) string {
	var parts []string
	for _, cs := range css {
		parts = append(parts, fmt.Sprintf("{cluster %s shared %v frontends %v backends %v}", cs.Cluster, cs.Shared, cs.Frontends, cs.Backends))
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// checkWatcherState: the watcher keeps an owner for every labelled
// slice (its label's service) and for no other, and a service's state
// only while it has a Service or a slice: nothing leaks as objects come
// and go.
func (run *randomRun) checkWatcherState(owned map[k8s.Key][]*discoveryv1.EndpointSlice) {
	labelled := 0
	for key, sl := range run.slices {
		name := sl.Labels[discoveryv1.LabelServiceName]
		if name == "" {
			if st := run.w.owner[key]; st != nil {
				run.fatalf("the watcher files unlabelled slice %s under %s", key, st.key)
			}
			continue
		}
		labelled++
		if st := run.w.owner[key]; st == nil || st.key != (k8s.Key{Namespace: key.Namespace, Name: name}) {
			run.fatalf("the watcher files slice %s under %v, want %s/%s", key, ownerKey(st), key.Namespace, name)
		}
	}
	if len(run.w.owner) != labelled {
		run.fatalf("the watcher keeps owners of %d slices, want the %d labelled ones", len(run.w.owner), labelled)
	}
	for key, st := range run.w.services {
		if run.svcs[key] == nil && len(owned[key]) == 0 {
			run.fatalf("the watcher keeps the state of %s (%d slices), which has neither a Service nor a slice", key, len(st.slices))
		}
	}
}

func ownerKey(st *serviceState) any {
	if st == nil {
		return "nothing"
	}
	return st.key
}
