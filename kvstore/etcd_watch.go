package kvstore

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watchRetry is the backoff between failed list or watch attempts.
var watchRetry = struct{ min, max time.Duration }{min: 100 * time.Millisecond, max: 10 * time.Second}

func (e *etcdBackend) ListAndWatch(ctx context.Context, prefix string) <-chan Event {
	ch := make(chan Event, 128)
	w := &watcher{e: e, prefix: prefix, out: ch, known: map[string]int64{}}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(ch)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(e.ctx, cancel) // Close ends every watch
		defer stop()
		w.run(ctx)
	}()
	return ch
}

// watcher lists and watches one prefix. known maps each key it has
// reported to its mod revision, so a re-list emits only differences.
type watcher struct {
	e      *etcdBackend
	prefix string
	out    chan<- Event
	known  map[string]int64
	listed bool
}

func (w *watcher) run(ctx context.Context) {
	failures := 0
	var rev int64 // last revision we are up to date with; 0: must list
	for ctx.Err() == nil {
		var err error
		if rev == 0 {
			rev, err = w.list(ctx)
		} else {
			rev, err = w.watch(ctx, rev)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			failures = 0
			continue
		}
		if errors.Is(err, rpctypes.ErrCompacted) {
			w.e.log.Info("Watch revision compacted, listing again", "prefix", w.prefix)
			rev = 0
			continue
		}
		failures++
		wait := min(watchRetry.min<<min(failures-1, 16), watchRetry.max)
		w.e.log.Warn("Watch failed, retrying", "prefix", w.prefix, "retry-in", wait, "error", err)
		if !sleepCtx(ctx, wait) {
			return
		}
	}
}

// list reads the whole prefix at one revision, emits what changed since
// the last list (everything, the first time) and returns the revision.
func (w *watcher) list(ctx context.Context) (int64, error) {
	seen := make(map[string]bool, len(w.known))
	var sendErr error
	rev, err := w.e.listPages(ctx, w.prefix, 0, func(resp *clientv3.GetResponse) {
		for _, kv := range resp.Kvs {
			key := string(kv.Key)
			seen[key] = true
			if sendErr == nil {
				sendErr = w.upsert(ctx, key, kv.Value, kv.ModRevision)
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if sendErr != nil {
		return 0, sendErr
	}
	for key := range w.known {
		if !seen[key] {
			if err := w.remove(ctx, key); err != nil {
				return 0, err
			}
		}
	}
	if !w.listed {
		w.listed = true
		if err := w.send(ctx, Event{Type: EventListDone}); err != nil {
			return 0, err
		}
	}
	return rev, nil
}

// watch follows the prefix from rev+1 until the watch fails; it returns
// the last revision it processed.
func (w *watcher) watch(ctx context.Context, rev int64) (int64, error) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := w.e.client.Watch(wctx, w.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for resp := range wch {
		if resp.CompactRevision != 0 {
			return rev, rpctypes.ErrCompacted
		}
		if err := resp.Err(); err != nil {
			return rev, err
		}
		for _, ev := range resp.Events {
			var err error
			key := string(ev.Kv.Key)
			if ev.Type == mvccpb.DELETE {
				err = w.remove(ctx, key)
			} else {
				err = w.upsert(ctx, key, ev.Kv.Value, ev.Kv.ModRevision)
			}
			if err != nil {
				return rev, err
			}
			w.e.metrics.eventReceived(ev.Type.String())
		}
		if resp.Header.Revision > rev {
			rev = resp.Header.Revision
		}
	}
	if ctx.Err() != nil {
		return rev, ctx.Err()
	}
	return rev, errors.New("watch channel closed")
}

func (w *watcher) upsert(ctx context.Context, key string, value []byte, modRev int64) error {
	prev, ok := w.known[key]
	if ok && prev == modRev {
		return nil // seen already (re-list after a watch failure)
	}
	w.known[key] = modRev
	typ := EventCreate
	if ok {
		typ = EventModify
	}
	return w.send(ctx, Event{Type: typ, Key: key, Value: value})
}

func (w *watcher) remove(ctx context.Context, key string) error {
	if _, ok := w.known[key]; !ok {
		return nil
	}
	delete(w.known, key)
	return w.send(ctx, Event{Type: EventDelete, Key: key})
}

func (w *watcher) send(ctx context.Context, ev Event) error {
	select {
	case w.out <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
