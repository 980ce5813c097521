package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/cells/stdhive"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

// labelSet is the i-th distinct set, shaped like a pod's labels.
func labelSet(i int) labels.Labels {
	return labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app", fmt.Sprintf("app-%d", i)),
		labels.New(labels.SourceK8s, "app.kubernetes.io/version", fmt.Sprintf("v%d", i%7)),
		labels.New(labels.SourceK8s, labels.PrefixNamespaceLabels+".kubernetes.io/metadata.name", fmt.Sprintf("ns-%d", i%50)),
		labels.New(labels.SourceK8s, labels.KeyServiceAccount, "default"),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, fmt.Sprintf("ns-%d", i%50)),
	})
}

func measure(b testing.TB, sets, workers int) (results, error) {
	srv := kvstoretest.StartServer(b)
	var r results
	var err error
	if r.rawCreate, err = rawCreateOnly(srv.NewBackend(), sets, workers); err != nil {
		return r, err
	}
	first, stop1, err := startAgent(srv, "10.0.0.1")
	if err != nil {
		return r, err
	}
	defer stop1()
	var ids map[identity.NumericIdentity]bool
	if r.alloc, ids, err = allocateAll(first, sets, workers); err != nil {
		return r, err
	}
	if len(ids) != sets {
		return r, fmt.Errorf("%d distinct ids for %d label sets", len(ids), sets)
	}
	second, stop2, err := startAgent(srv, "10.0.0.2")
	if err != nil {
		return r, err
	}
	defer stop2()
	var again map[identity.NumericIdentity]bool
	if r.reused, again, err = allocateAll(second, sets, workers); err != nil {
		return r, err
	}
	for id := range again {
		if !ids[id] {
			return r, fmt.Errorf("the second agent got id %d the first did not allocate", id)
		}
	}
	return r, nil
}

// rawCreateOnly writes one master-like key per set with CreateOnly.
func rawCreateOnly(backend kvstore.Backend, sets, workers int) (time.Duration, error) {
	ctx := context.Background()
	values := make([][]byte, sets)
	for i := range values {
		values[i] = []byte(labelSet(i).SortedList())
	}
	return parallel(sets, workers, func(i int) error {
		created, err := backend.CreateOnly(ctx, fmt.Sprintf("cilium/bench/raw/id/%d", 256+i), values[i], false)
		if err == nil && !created {
			err = fmt.Errorf("key %d existed", i)
		}
		return err
	})
}

// startAgent starts a hive with the kvstore and identity cells.
func startAgent(srv *kvstoretest.Server, ip string) (identity.Allocator, func(), error) {
	var alloc identity.Allocator
	addr := netip.MustParseAddr(ip)
	h := stdhive.New(hive.Options{Logger: slog.New(slog.DiscardHandler)},
		kvstorecell.Cell, identitycell.Cell, cell.Invoke(func(a identity.Allocator) { alloc = a }),
		cell.Config(cluster.DefaultInfo),
		cell.Provide(func(c cluster.Info) localnode.Store {
			return localnode.NewStore(localnode.LocalNode{Name: "bench", IP: addr, Cluster: c})
		}))
	flags := []string{"--kvstore=etcd", "--kvstore-opt=etcd.address=" + srv.Endpoint(),
		"--kvstore-heartbeat-writer=false", "--identity-gc-interval=0"}
	if err := h.Flags().Parse(flags); err != nil {
		return nil, nil, err
	}
	if err := h.Start(context.Background()); err != nil {
		return nil, nil, err
	}
	stop := func() { _ = h.Stop(context.Background()) }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := alloc.WaitForInitialGlobalIdentities(ctx); err != nil {
		stop()
		return nil, nil, err
	}
	return alloc, stop, nil
}

// allocateAll allocates every set and returns the ids it got.
func allocateAll(alloc identity.Allocator, sets, workers int) (time.Duration, map[identity.NumericIdentity]bool, error) {
	ctx := context.Background()
	got := make([]identity.NumericIdentity, sets)
	d, err := parallel(sets, workers, func(i int) error {
		id, _, err := alloc.AllocateIdentity(ctx, labelSet(i))
		if err == nil {
			got[i] = id.ID
		}
		return err
	})
	ids := make(map[identity.NumericIdentity]bool, sets)
	for _, id := range got {
		ids[id] = true
	}
	return d, ids, err
}

// parallel runs fn for 0..n-1 on workers goroutines and times it.
func parallel(n, workers int, fn func(i int) error) (time.Duration, error) {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	begin := time.Now()
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				if err := fn(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return time.Since(begin), <-errs
}
