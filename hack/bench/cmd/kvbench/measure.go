package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
)

// entry is a value shaped like an ipcache entry (~200 bytes of JSON).
type entry struct {
	IP       string `json:"IP"`
	Mask     string `json:"Mask"`
	HostIP   string `json:"HostIP"`
	ID       int    `json:"ID"`
	Key      int    `json:"Key"`
	Metadata string `json:"Metadata"`
	K8sNS    string `json:"K8sNamespace"`
	K8sPod   string `json:"K8sPodName"`
	Name     string `json:"-"`
}

func (e *entry) GetKeyName() string       { return e.Name }
func (e *entry) Marshal() ([]byte, error) { return json.Marshal(e) }

func newEntry(i int) *entry {
	ip := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
	return &entry{
		IP: ip, HostIP: "192.168.1.17", ID: 10000 + i%5000, Metadata: "cilium-global:default:node-17:" + fmt.Sprint(i),
		K8sNS: "namespace-" + fmt.Sprint(i%50), K8sPod: fmt.Sprintf("deployment-%d-7c9f8d6b5-x%05d", i%300, i), Name: ip,
	}
}

var entryFactory = store.KeyFactoryFunc(func(name string, value []byte) (store.Key, error) {
	var e entry
	if err := json.Unmarshal(value, &e); err != nil {
		return nil, err
	}
	e.Name = name
	return &e, nil
})

const (
	readPrefix  = layout.IPDefaultPrefix + "/"
	writePrefix = layout.IPPrefix + "/bench/"
)

func measure(b testing.TB, keys, runs int) (results, error) {
	srv := kvstoretest.StartServer(b)
	raw := srv.Client()
	ctx := context.Background()
	var r results
	var writes []time.Duration
	for range runs {
		if _, err := raw.Delete(ctx, readPrefix, clientv3.WithPrefix()); err != nil {
			return r, err
		}
		d, err := rawPuts(ctx, raw, keys)
		if err != nil {
			return r, err
		}
		writes = append(writes, d)
	}
	r.rawWrite = bench.Median(writes)
	var plain, watch []time.Duration
	backend := srv.NewBackend()
	for range runs {
		d, err := plainRead(ctx, raw, keys)
		if err != nil {
			return r, err
		}
		plain = append(plain, d)
		d, err = watchRead(backend, keys)
		if err != nil {
			return r, err
		}
		watch = append(watch, d)
	}
	r.plainRead, r.watchRead = bench.Median(plain), bench.Median(watch)
	var syncs []time.Duration
	for range runs {
		if _, err := raw.Delete(ctx, writePrefix, clientv3.WithPrefix()); err != nil {
			return r, err
		}
		d, err := syncStoreWrite(srv, keys)
		if err != nil {
			return r, err
		}
		syncs = append(syncs, d)
	}
	r.syncStoreWrite = bench.Median(syncs)
	return r, nil
}

// rawPuts writes the keys as a SyncStore batches them: transactions of
// kvstore.MaxBatchOps puts bound to one lease, 32 transactions in flight
// (the SyncStore's default workers), so that the write ratio compares
// batching with batching rather than with single puts. The lease is
// granted before the clock starts, as the SyncStore's session lease is.
func rawPuts(ctx context.Context, c *clientv3.Client, keys int) (time.Duration, error) {
	values := make([][]byte, keys)
	for i := range values {
		values[i], _ = newEntry(i).Marshal()
	}
	lease, err := c.Grant(ctx, int64(time.Hour/time.Second))
	if err != nil {
		return 0, fmt.Errorf("grant lease: %w", err)
	}
	batches := make(chan []clientv3.Op)
	go func() {
		defer close(batches)
		for from := 0; from < keys; from += kvstore.MaxBatchOps {
			ops := make([]clientv3.Op, 0, kvstore.MaxBatchOps)
			for i := from; i < min(keys, from+kvstore.MaxBatchOps); i++ {
				ops = append(ops, clientv3.OpPut(readPrefix+newEntry(i).Name, string(values[i]), clientv3.WithLease(lease.ID)))
			}
			batches <- ops
		}
	}()
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for range 32 {
		wg.Go(func() {
			for ops := range batches {
				if _, err := c.Txn(ctx).Then(ops...).Commit(); err != nil {
					errs <- err
					for range batches { // let the producer finish
					}
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return time.Since(begin), <-errs
}

// plainRead is what a hand-written reader does: paginated Get at one
// revision and json.Unmarshal of every value.
func plainRead(ctx context.Context, c *clientv3.Client, keys int) (time.Duration, error) {
	begin := time.Now()
	decoded := make(map[string]*entry, keys)
	from, end := readPrefix, clientv3.GetPrefixRangeEnd(readPrefix)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(1000)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.Get(ctx, from, opts...)
		if err != nil {
			return 0, err
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			var e entry
			if err := json.Unmarshal(kv.Value, &e); err != nil {
				return 0, err
			}
			decoded[string(kv.Key)] = &e
		}
		if !resp.More {
			break
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
	d := time.Since(begin)
	if len(decoded) != keys {
		return 0, fmt.Errorf("plain read got %d keys, want %d", len(decoded), keys)
	}
	return d, nil
}

// watchRead syncs a fresh WatchStore over the prefix.
func watchRead(backend kvstore.Backend, keys int) (time.Duration, error) {
	synced := make(chan struct{})
	ws := store.NewWatchStore("bench", entryFactory, store.ObserverFuncs{},
		store.WithOnSync(func(context.Context) { close(synced) }))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	begin := time.Now()
	wg.Go(func() { ws.Watch(ctx, backend, readPrefix) })
	<-synced
	d := time.Since(begin)
	cancel()
	wg.Wait()
	if n := ws.NumEntries(); n != keys {
		return 0, fmt.Errorf("watch store holds %d keys, want %d", n, keys)
	}
	return d, nil
}

// syncStoreWrite upserts the keys through a SyncStore and waits for its
// sync canary.
func syncStoreWrite(srv *kvstoretest.Server, keys int) (time.Duration, error) {
	backend := srv.NewBackend()
	defer backend.Close()
	s := store.NewSyncStore("bench", backend, writePrefix)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	defer func() { cancel(); wg.Wait() }()
	entries := make([]*entry, keys)
	for i := range entries {
		entries[i] = newEntry(i)
	}
	begin := time.Now()
	for _, e := range entries {
		if err := s.UpsertKey(ctx, e); err != nil {
			return 0, err
		}
	}
	done := make(chan struct{})
	s.Synced(ctx, func(context.Context) { close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		return 0, fmt.Errorf("sync store not synced after 10m")
	}
	return time.Since(begin), nil
}
