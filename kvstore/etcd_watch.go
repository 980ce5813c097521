package kvstore

import (
	"context"
	"errors"
	"hash/maphash"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/job"
)

// watchRetry is the backoff between failed list or watch attempts, with
// jitter: after an etcd restart every agent's watches fail at once.
var watchRetry = job.Backoff{Min: 100 * time.Millisecond, Max: 10 * time.Second, Factor: 2}

// errHistoryLost ends a watch when etcd went back in time.
var errHistoryLost = errors.New("etcd went back in time")

func (e *etcdBackend) ListAndWatch(ctx context.Context, prefix string) <-chan Event {
	// Room for a page of the list: the watcher hands a page over and
	// requests the next while the reader works through it, rather than
	// waiting for the reader every few events.
	ch := make(chan Event, e.opts.ListLimit)
	w := &watcher{e: e, prefix: prefix, out: ch, known: map[string]knownKey{}, seed: maphash.MakeSeed()}
	started := e.spawn(func() {
		defer close(ch)
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(e.ctx, cancel) // Close ends every watch
		defer stop()
		w.run(ctx)
	})
	if !started {
		close(ch)
	}
	return ch
}

// watcher lists and watches one prefix. known holds each key it has
// reported, by its name below the prefix, so a re-list emits only
// differences.
type watcher struct {
	e      *etcdBackend
	prefix string
	out    chan<- Event
	known  map[string]knownKey
	seed   maphash.Seed
	listed bool
}

// knownKey is what a watcher reported of a key: its mod revision and a
// hash of its value. After etcd went back in time, revisions are those of
// another history; the value says whether the key changed.
type knownKey struct {
	modRev int64
	sum    uint64
}

func (w *watcher) run(ctx context.Context) {
	failures := 0
	var rev int64 // last revision we are up to date with; 0: must list
	var epoch historyMark
	var changed <-chan struct{}
	for ctx.Err() == nil {
		var err error
		if rev == 0 {
			epoch, changed = w.e.hist.current()
			rev, err = w.list(ctx)
		} else {
			rev, err = w.watch(ctx, rev, epoch, changed)
		}
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			failures = 0
			continue
		}
		switch {
		case errors.Is(err, rpctypes.ErrCompacted):
			w.e.log.Info("Watch revision compacted, listing again", "prefix", w.prefix)
			rev = 0
			continue
		case errors.Is(err, errHistoryLost):
			w.e.log.Info("etcd went back in time, listing again", "prefix", w.prefix)
			rev = 0
			continue
		}
		failures++
		wait := watchRetry.Duration(failures)
		w.e.log.Warn("Watch failed, retrying", "prefix", w.prefix, "retry-in", wait, "error", err)
		if !job.Sleep(ctx, wait) {
			return
		}
	}
}

// list reads the whole prefix at one revision, emits what changed since
// the last list (everything, the first time) and returns the revision.
func (w *watcher) list(ctx context.Context) (int64, error) {
	// The first list has nothing to compare with: no set of the keys
	// seen, and the known keys' map sized from the first page's count.
	var seen map[string]bool
	if len(w.known) > 0 {
		seen = make(map[string]bool, len(w.known))
	}
	var sendErr error
	rev, err := w.e.listPages(ctx, w.prefix, 0, func(resp *clientv3.GetResponse) {
		if len(w.known) == 0 && seen == nil && resp.Count > 0 {
			w.known = make(map[string]knownKey, resp.Count)
		}
		for _, kv := range resp.Kvs {
			name, ok := w.nameOf(kv.Key)
			if !ok {
				continue
			}
			if seen != nil {
				seen[name] = true
			}
			if sendErr == nil {
				sendErr = w.upsert(ctx, name, kv.Value, kv.ModRevision, true)
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if sendErr != nil {
		return 0, sendErr
	}
	for name := range w.known {
		if seen != nil && !seen[name] {
			if err := w.remove(ctx, name); err != nil {
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

// watch follows the prefix from rev+1 until the watch fails or the epoch
// of the list ends (changed closes); it returns the last revision it
// processed.
func (w *watcher) watch(ctx context.Context, rev int64, epoch historyMark, changed <-chan struct{}) (int64, error) {
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer cancel()
	wch := w.e.client.Watch(wctx, w.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	for {
		var resp clientv3.WatchResponse
		var ok bool
		select {
		case <-changed: // first, so that a watch whose epoch ended takes no more events
			return rev, errHistoryLost
		default:
		}
		select {
		case resp, ok = <-wch:
		case <-changed:
			return rev, errHistoryLost
		}
		if !ok {
			break
		}
		if resp.CompactRevision != 0 {
			return rev, rpctypes.ErrCompacted
		}
		if err := resp.Err(); err != nil {
			return rev, err
		}
		w.e.hist.seen(epoch, resp.Header)
		if r := resp.Header.GetRevision(); r != 0 && r < rev {
			// The member serving the watch is behind what we have seen:
			// it lags, or etcd went back in time. A linearizable read
			// tells which.
			w.e.verifyHistory()
		}
		for _, ev := range resp.Events {
			name, ok := w.nameOf(ev.Kv.Key)
			var err error
			switch {
			case !ok:
			case ev.Type == mvccpb.DELETE:
				err = w.remove(ctx, name)
			default:
				err = w.upsert(ctx, name, ev.Kv.Value, ev.Kv.ModRevision, false)
			}
			if err != nil {
				return rev, err
			}
			w.e.metrics.eventReceived(ev.Type.String())
		}
		// Resume after the last event processed. The header's revision
		// may be ahead of it: a watcher catching up gets at most 1000
		// revisions of events per response, with the store's current
		// revision in the header. Only a progress notification promises
		// that nothing up to its header's revision is pending.
		if n := len(resp.Events); n > 0 {
			rev = max(rev, resp.Events[n-1].Kv.ModRevision)
		} else if resp.IsProgressNotify() {
			rev = max(rev, resp.Header.GetRevision())
		}
	}
	if ctx.Err() != nil {
		return rev, ctx.Err()
	}
	return rev, errors.New("watch channel closed")
}

// nameOf returns a key below the prefix as a string of its own (only
// the part below the prefix, so that what the watcher and its reader
// keep of every key is that short string).
func (w *watcher) nameOf(key []byte) (string, bool) {
	if len(key) < len(w.prefix) || string(key[:len(w.prefix)]) != w.prefix {
		return "", false // etcd answers a prefix range with keys under it
	}
	return string(key[len(w.prefix):]), true
}

// upsert reports the key name (below the prefix) as created or modified
// unless it is known already with the same value: from a list, the same
// value means nothing changed (after a compaction or after etcd went
// back in time, when revisions differ); from the watch, every new
// revision is a write.
func (w *watcher) upsert(ctx context.Context, name string, value []byte, modRev int64, fromList bool) error {
	sum := maphash.Bytes(w.seed, value)
	prev, ok := w.known[name]
	w.known[name] = knownKey{modRev: modRev, sum: sum}
	if ok && prev.sum == sum && (fromList || prev.modRev == modRev) {
		return nil
	}
	typ := EventCreate
	if ok {
		typ = EventModify
	}
	return w.send(ctx, Event{Type: typ, Key: w.prefix + name, Name: name, Value: value})
}

func (w *watcher) remove(ctx context.Context, name string) error {
	if _, ok := w.known[name]; !ok {
		return nil
	}
	delete(w.known, name)
	return w.send(ctx, Event{Type: EventDelete, Key: w.prefix + name, Name: name})
}

func (w *watcher) send(ctx context.Context, ev Event) error {
	select {
	case w.out <- ev:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
