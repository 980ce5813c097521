package allocator_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/kvstore/allocator"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

func TestPaths(t *testing.T) {
	key := "k8s:app=web;k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=default;"
	for _, tc := range []struct {
		name, got, want string
	}{
		{"master", paths.MasterKey(65792), "cilium/state/identities/v1/id/65792"},
		{"reference", paths.ValueKey(key, "192.168.1.17"),
			"cilium/state/identities/v1/value/k8s:app=web;k8s:io.cilium.k8s.namespace.labels.kubernetes.io/metadata.name=default;/192.168.1.17"},
		{"references", paths.ValuePrefix(key), "cilium/state/identities/v1/value/" + key + "/"},
		{"lock", paths.LockPath(key), "cilium/state/identities/v1/locks/" + key},
		{"gc lock", paths.GCLockPath(), "cilium/state/identities/v1/locks/gc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	decode := func(_ allocator.ID, k string) (string, error) { return k, nil }
	for _, tc := range []struct {
		name string
		give allocator.Options[string]
		want string
	}{
		{"no backend", allocator.Options[string]{BasePath: base, Suffix: "n1", Min: 1, Max: 2, Decode: decode}, "no backend"},
		{"slash in suffix", allocator.Options[string]{Backend: b, BasePath: base, Suffix: "a/b", Min: 1, Max: 2, Decode: decode}, `suffix "a/b"`},
		{"empty range", allocator.Options[string]{Backend: b, BasePath: base, Suffix: "n1", Min: 5, Max: 4, Decode: decode}, "range 5..4"},
		{"trailing slash", allocator.Options[string]{Backend: b, BasePath: base + "/", Suffix: "n1", Min: 1, Max: 2, Decode: decode}, "base path"},
		{"no decoder", allocator.Options[string]{Backend: b, BasePath: base, Suffix: "n1", Min: 1, Max: 2}, "neither a Decode function nor a Watcher"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := allocator.New(tc.give)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New() = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestTwoNodesAllocateConcurrently: two nodes allocating the same keys at
// the same time agree on every id, and exactly one of them created it.
func TestTwoNodesAllocateConcurrently(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	nodes := []*agent{
		startAgent(t, srv, agentOpts{suffix: "10.0.0.1"}),
		startAgent(t, srv, agentOpts{suffix: "10.0.0.2"}),
	}
	const keys = 20
	type result struct {
		id    allocator.ID
		isNew bool
	}
	results := make([][keys]result, len(nodes))
	var wg sync.WaitGroup
	for n, node := range nodes {
		for k := range keys {
			wg.Go(func() {
				id, isNew, err := node.Allocate(ctxFor(t), fmt.Sprintf("k8s:app=app-%d;", k))
				if err != nil {
					t.Error(err)
				}
				results[n][k] = result{id, isNew}
			})
		}
	}
	wg.Wait()
	seen := map[allocator.ID]int{}
	for k := range keys {
		a, b := results[0][k], results[1][k]
		key := fmt.Sprintf("k8s:app=app-%d;", k)
		if a.id != b.id || a.id < 256 || a.id > 65535 {
			t.Errorf("%s: node 1 got %d, node 2 got %d", key, a.id, b.id)
		}
		if a.isNew == b.isNew {
			t.Errorf("%s: isNew %v and %v, want exactly one creator", key, a.isNew, b.isNew)
		}
		if prev, dup := seen[a.id]; dup {
			t.Errorf("id %d given to app-%d and app-%d", a.id, prev, k)
		}
		seen[a.id] = k
		if got := get(t, raw, paths.MasterKey(a.id)); got != key {
			t.Errorf("master %d = %q, want %q", a.id, got, key)
		}
		for _, suffix := range []string{"10.0.0.1", "10.0.0.2"} {
			if got := get(t, raw, paths.ValueKey(key, suffix)); got != a.id.String() {
				t.Errorf("reference of %s by %s = %q, want %d", key, suffix, got, a.id)
			}
		}
	}
}

// TestRaceForIDs: with a range as small as the number of keys, nodes
// that pick the same ids for different keys retry until all fit.
func TestRaceForIDs(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	n1 := startAgent(t, srv, agentOpts{suffix: "n1", min: 1000, max: 1007})
	n2 := startAgent(t, srv, agentOpts{suffix: "n2", min: 1000, max: 1007})
	ids := make([]allocator.ID, 8)
	var wg sync.WaitGroup
	for i := range 8 {
		node := n1
		if i%2 == 1 {
			node = n2
		}
		wg.Go(func() {
			id, _, err := node.Allocate(ctxFor(t), fmt.Sprintf("k:%d=;", i))
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		})
	}
	wg.Wait()
	seen := map[allocator.ID]bool{}
	for i, id := range ids {
		if id < 1000 || id > 1007 || seen[id] {
			t.Errorf("key %d got id %d (ids %v), want distinct ids in 1000..1007", i, id, ids)
		}
		seen[id] = true
	}
	_, _, err := n1.Allocate(ctxFor(t), "k:full=;")
	if !errors.Is(err, allocator.ErrNoFreeID) {
		t.Errorf("allocation in a full range = %v, want ErrNoFreeID", err)
	}
}

func TestReleaseDropsOnlyOurReference(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	n1 := startAgent(t, srv, agentOpts{suffix: "n1"})
	n2 := startAgent(t, srv, agentOpts{suffix: "n2"})
	const key = "k8s:app=db;"
	id, isNew, err := n1.Allocate(ctxFor(t), key)
	must(t, err)
	if again, isNew2, err := n1.Allocate(ctxFor(t), key); err != nil || again != id || !isNew || isNew2 {
		t.Fatalf("second local allocation = %d %v %v, first %d %v", again, isNew2, err, id, isNew)
	}
	if _, _, err := n2.Allocate(ctxFor(t), key); err != nil {
		t.Fatal(err)
	}
	if last, err := n1.Release(ctxFor(t), key); err != nil || last {
		t.Errorf("first release = %v, %v; want not last", last, err)
	}
	if get(t, raw, paths.ValueKey(key, "n1")) == "" {
		t.Error("reference of n1 deleted while n1 still uses the key")
	}
	if last, err := n1.Release(ctxFor(t), key); err != nil || !last {
		t.Errorf("second release = %v, %v; want last", last, err)
	}
	if got := get(t, raw, paths.ValueKey(key, "n1")); got != "" {
		t.Errorf("reference of n1 = %q after its last release", got)
	}
	if get(t, raw, paths.ValueKey(key, "n2")) != id.String() || get(t, raw, paths.MasterKey(id)) != key {
		t.Error("release by n1 touched n2's reference or the master")
	}
	if _, err := n1.Release(ctxFor(t), key); !errors.Is(err, allocator.ErrNotAllocated) {
		t.Errorf("release of a key not held = %v, want ErrNotAllocated", err)
	}
	if _, _, err := n1.Allocate(ctxFor(t), ""); !errors.Is(err, allocator.ErrInvalidKey) {
		t.Errorf("empty key = %v, want ErrInvalidKey", err)
	}
}

// TestRestartKeepsIDs: a node that comes back finds its ids again, from
// its old reference or, once that expired, from the master in the cache.
func TestRestartKeepsIDs(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	first := startAgent(t, srv, agentOpts{suffix: "n1"})
	idA, _, err := first.Allocate(ctxFor(t), "k8s:app=a;")
	must(t, err)
	idB, _, err := first.Allocate(ctxFor(t), "k8s:app=b;")
	must(t, err)
	first.backend.Close()
	// b's reference expired while the node was down.
	del(t, raw, paths.ValueKey("k8s:app=b;", "n1"))

	again := startAgent(t, srv, agentOpts{suffix: "n1"})
	for key, want := range map[string]allocator.ID{"k8s:app=a;": idA, "k8s:app=b;": idB} {
		id, isNew, err := again.Allocate(ctxFor(t), key)
		if err != nil || id != want || isNew {
			t.Errorf("%s after restart = %d (new %v, %v), want %d", key, id, isNew, err, want)
		}
		if got := get(t, raw, paths.ValueKey(key, "n1")); got != want.String() {
			t.Errorf("reference of %s after restart = %q", key, got)
		}
	}
}
