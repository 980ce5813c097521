package allocator_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

// upperKey is a master key decoded by the caller's watcher: its value is
// the key in upper case.
type upperKey struct {
	name, key string
}

func (k *upperKey) GetKeyName() string { return k.name }
func (k *upperKey) Master() (allocator.ID, string, string) {
	id, _ := strconv.ParseUint(k.name, 10, 64)
	return allocator.ID(id), k.key, strings.ToUpper(k.key)
}

// upperWatcher is a caller's MasterWatcher of the master keys.
type upperWatcher struct{ ws *store.WatchStore }

func (w upperWatcher) Watch(ctx context.Context, b kvstore.Backend) {
	w.ws.Watch(ctx, b, paths.IDPrefix())
}
func (w upperWatcher) Store() *store.WatchStore { return w.ws }

var upperFactory = store.KeyFactoryFunc(func(name string, value []byte) (store.Key, error) {
	if _, err := allocator.CheckMaster(name, value); err != nil {
		return nil, err
	}
	return &upperKey{name: name, key: string(value)}, nil
})

// TestWatcherOption: with Options.Watcher the cache is fed by the
// caller's watcher (its keys, its decoding, its skipped entries) and the
// allocator works on it as on its own: it reuses an id found there,
// allocates beside the ids there (skipped ones included) and tells the
// events. The range is small, so that an occupied id would be drawn.
func TestWatcherOption(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, paths.MasterKey(256), "a")
	put(t, raw, paths.IDPrefix()+"257", "") // skipped by the caller's watcher: its id stays occupied
	ev := &events{}
	var built bool
	a, err := allocator.New(allocator.Options[string]{
		Backend: srv.NewBackend(), BasePath: base, Suffix: "n1", Min: 256, Max: 259, Logger: celltest.Logger(t),
		Watcher: func(observer store.BatchObserver, opts ...store.WatchStoreOption) allocator.MasterWatcher {
			built = true
			return upperWatcher{ws: store.NewWatchStore("upper", upperFactory, observer, opts...)}
		},
		Events: allocator.Events[string]{
			Upsert: func(id allocator.ID, v string) { ev.add(strconv.Itoa(int(id)) + "=" + v) },
			Synced: func() { ev.add("synced") },
		},
	})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	must(t, a.WaitForSync(ctxFor(t)))

	id, isNew, err := a.Allocate(ctxFor(t), "a")
	must(t, err)
	if !built || id != 256 || isNew {
		t.Errorf("Allocate(a) = %d, new %t (watcher built: %t); want the existing 256", id, isNew, built)
	}
	idB, _, err := a.Allocate(ctxFor(t), "b")
	if err != nil || idB == 256 || idB == 257 {
		t.Errorf("Allocate(b) = %d, %v; want a free id (256 is a's, 257 is occupied by a skipped master)", idB, err)
	}
	if v, ok := a.Get(256); !ok || v != "A" {
		t.Errorf("Get(256) = %q, %t; want the watcher's value A", v, ok)
	}
	if inv := a.Invalid(); len(inv) != 1 || inv[0].Key != paths.IDPrefix()+"257" {
		t.Errorf("Invalid() = %+v, want the master of 257", inv)
	}
	celltest.Eventually(t, "the events of a and b", func() bool {
		got := strings.Join(ev.snapshot(), " ")
		return strings.HasPrefix(got, "256=A synced") && strings.Contains(got, strconv.Itoa(int(idB))+"=B")
	})
}
