package allocator

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

// ID is an allocated identifier.
type ID uint64

// String formats the id in decimal, the form of master key names and
// reference values.
func (id ID) String() string { return strconv.FormatUint(uint64(id), 10) }

// Errors returned by the allocator.
var (
	// ErrNoFreeID is returned when every id of the range is in use.
	ErrNoFreeID = errors.New("no free id in the allocation range")
	// ErrNotAllocated is returned by Release for a key this allocator
	// holds no reference to.
	ErrNotAllocated = errors.New("key is not allocated here")
	// ErrInvalidKey is returned for a key that cannot be stored (empty).
	ErrInvalidKey = errors.New("invalid allocator key")
	// ErrConflict says that a master key holds another key than ours.
	ErrConflict = errors.New("master key holds another key")
)

// Events are told about the master keys of the cache, from the watch
// goroutine and in order. Nil functions are skipped. They must not call
// Allocate or Release.
type Events[V any] struct {
	// Upsert is called for a new valid master key.
	Upsert func(id ID, v V)
	// Delete is called with the last value of a removed master key (a
	// modified one is a Delete of the old value and an Upsert of the new).
	Delete func(id ID, v V)
	// Synced is called once, when the first list is complete.
	Synced func()
}

// Options configure an Allocator.
type Options[V any] struct {
	// Backend is the kvstore (required).
	Backend kvstore.Backend
	// BasePath is the prefix of every key, e.g.
	// layout.IdentitiesPrefix (required, no trailing slash).
	BasePath string
	// Suffix names this node in its reference keys; Cilium uses the
	// node's IP address (required, no '/').
	Suffix string
	// Min and Max bound the ids this allocator hands out (1 <= Min <= Max).
	Min, Max ID
	// Decode turns a master key's value into V (required without
	// Watcher). An error
	// makes the cache skip the entry, of the kind it matches
	// (store.ErrRefused, else store.ErrMalformed); its id stays occupied.
	// It runs on the watch goroutine.
	Decode func(id ID, key string) (V, error)
	// Watcher, if set, builds the watcher of the master keys in place of
	// the cache's own (which decodes with Decode): the caller's watcher
	// of its cluster's master keys, such as the one that also reads a
	// remote cluster's (policy/identity/identitycell). It must hand its
	// changes to observer, take opts among its watch store's options and
	// decode to MasterKey[V] keys, refusing what CheckMaster refuses.
	Watcher func(observer store.BatchObserver, opts ...store.WatchStoreOption) MasterWatcher
	// Events are told about the cache's changes.
	Events Events[V]
	// Logger receives the allocator's logs (default: discarded).
	Logger *slog.Logger
	// Metrics are the watch store's metrics (default: the store package's).
	Metrics *store.Metrics
	// Scope names the allocator in logs and metrics (default "allocator").
	Scope string
}

func (o *Options[V]) validate() error {
	var errs []error
	switch {
	case o.Backend == nil:
		errs = append(errs, errors.New("no backend"))
	case o.Decode == nil && o.Watcher == nil:
		errs = append(errs, errors.New("neither a Decode function nor a Watcher"))
	}
	if o.BasePath == "" || strings.HasSuffix(o.BasePath, "/") {
		errs = append(errs, fmt.Errorf("base path %q must be non-empty without a trailing '/'", o.BasePath))
	}
	if o.Suffix == "" || strings.Contains(o.Suffix, "/") {
		errs = append(errs, fmt.Errorf("suffix %q must be non-empty without '/'", o.Suffix))
	}
	if o.Min < 1 || o.Max < o.Min {
		errs = append(errs, fmt.Errorf("range %d..%d is empty or starts at 0", o.Min, o.Max))
	}
	return errors.Join(errs...)
}

// Paths are the kvstore keys of an allocator under a base path, in the
// directories kvstore/layout names (AllocatorIDDir, AllocatorValueDir,
// AllocatorLocksDir).
type Paths struct {
	// Base is the base path, without a trailing slash.
	Base string
}

// IDPrefix is the prefix of every master key: "<base>/id/".
func (p Paths) IDPrefix() string { return p.Base + "/" + layout.AllocatorIDDir + "/" }

// MasterKey is "<base>/id/<id>".
func (p Paths) MasterKey(id ID) string { return p.IDPrefix() + id.String() }

// ValuesPrefix is the prefix of every reference key: "<base>/value/".
func (p Paths) ValuesPrefix() string { return p.Base + "/" + layout.AllocatorValueDir + "/" }

// ValuePrefix is the prefix of the references of key:
// "<base>/value/<key>/".
func (p Paths) ValuePrefix(key string) string { return p.ValuesPrefix() + key + "/" }

// ValueKey is the reference of node suffix to key:
// "<base>/value/<key>/<suffix>".
func (p Paths) ValueKey(key, suffix string) string { return p.ValuePrefix(key) + suffix }

// LockPath is the lock held while allocating or collecting key:
// "<base>/locks/<key>".
func (p Paths) LockPath(key string) string { return p.locksPrefix() + key }

// GCLockPath is the lock held by the agent running the garbage
// collector: "<base>/locks/gc" (a canonical key never equals "gc").
func (p Paths) GCLockPath() string { return p.locksPrefix() + "gc" }

func (p Paths) locksPrefix() string { return p.Base + "/" + layout.AllocatorLocksDir + "/" }

// splitValueKey returns the allocator key and suffix of a reference key
// under the values prefix.
func (p Paths) splitValueKey(fullKey string) (key, suffix string, ok bool) {
	rest, ok := strings.CutPrefix(fullKey, p.ValuesPrefix())
	if !ok {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// localKey is a key in use on this node.
type localKey struct {
	id   ID
	refs int
}

// Allocator hands out ids for keys, agreed on by every node through the
// kvstore. It is safe for concurrent use.
type Allocator[V any] struct {
	opts  Options[V]
	paths Paths
	log   *slog.Logger
	cache *cache[V]
	keyMu KeyMutex

	mu             sync.Mutex
	local          map[string]*localKey
	localIDs       map[ID]string
	creating       map[ID]struct{}     // ids whose master this process is creating
	pendingRelease map[string]struct{} // references whose deletion failed
	expired        map[string]struct{} // references lost with a session lease
	expiredSignal  chan struct{}
	gcStale        map[string]int64 // unreferenced masters at the last round, by mod revision

	leaseOnce sync.Once
}

// New validates the options and returns an allocator. Run starts its
// cache; Allocate waits for the cache's first list.
func New[V any](opts Options[V]) (*Allocator[V], error) {
	if err := opts.validate(); err != nil {
		return nil, fmt.Errorf("create allocator: %w", err)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Scope == "" {
		opts.Scope = "allocator"
	}
	a := &Allocator[V]{
		opts:           opts,
		paths:          Paths{Base: opts.BasePath},
		log:            opts.Logger,
		local:          map[string]*localKey{},
		localIDs:       map[ID]string{},
		creating:       map[ID]struct{}{},
		pendingRelease: map[string]struct{}{},
		expired:        map[string]struct{}{},
		expiredSignal:  make(chan struct{}, 1),
		gcStale:        map[string]int64{},
	}
	a.cache = newCache(a)
	return a, nil
}

// Paths returns the allocator's kvstore keys.
func (a *Allocator[V]) Paths() Paths { return a.paths }

// Suffix returns the suffix of this node's reference keys.
func (a *Allocator[V]) Suffix() string { return a.opts.Suffix }

// LocalKeys returns the keys in use on this node with their ids.
func (a *Allocator[V]) LocalKeys() map[string]ID {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]ID, len(a.local))
	for k, l := range a.local {
		out[k] = l.id
	}
	return out
}

// LocalID returns the id of a key in local use.
func (a *Allocator[V]) LocalID(key string) (ID, bool) { return a.heldID(key) }

// LocalRefs returns the number of local references to key (0 when it is
// not in use here).
func (a *Allocator[V]) LocalRefs(key string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if l, ok := a.local[key]; ok {
		return l.refs
	}
	return 0
}
