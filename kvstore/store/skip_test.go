package store_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
)

// errOtherCluster is a package's own sentinel of the refused kind.
var errOtherCluster = store.KindError(store.ErrRefused, "node of another cluster")

// clusterNodeFactory decodes nodes and refuses those whose IP starts
// with 192.168. (standing for another cluster's).
var clusterNodeFactory = store.KeyFactoryFunc(func(name string, value []byte) (store.Key, error) {
	k, err := nodeFactory(name, value)
	if err != nil {
		return nil, err
	}
	if ip := k.(*node).IP; strings.HasPrefix(ip, "192.168.") {
		return nil, fmt.Errorf("field IP: %w: %s", errOtherCluster, ip)
	}
	return k, nil
})

func TestKindError(t *testing.T) {
	err := fmt.Errorf("field IP: %w: 192.168.1.1", errOtherCluster)
	if !errors.Is(err, store.ErrRefused) || !errors.Is(err, errOtherCluster) || errors.Is(err, store.ErrMalformed) {
		t.Errorf("%v: Is(ErrRefused)=%v Is(sentinel)=%v Is(ErrMalformed)=%v", err,
			errors.Is(err, store.ErrRefused), errors.Is(err, errOtherCluster), errors.Is(err, store.ErrMalformed))
	}
	if err.Error() != "field IP: node of another cluster: 192.168.1.1" {
		t.Errorf("message = %q", err)
	}
}

// TestWatchStoreSkipsEntriesByKind: bad entries are counted per kind,
// listed while they are in the kvstore, and never stop the rest.
func TestWatchStoreSkipsEntriesByKind(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	b := srv.NewBackend()
	put := func(name, value string) { must(t, b.Update(ctx(t), nodesPrefix+"/"+name, []byte(value), false)) }
	put("a", jsonNode("a", "10.0.0.1"))
	put("bad-json", `{"name":`)
	put("wrong-name", jsonNode("other", "10.0.0.2"))
	put("foreign", jsonNode("foreign", "192.168.0.1"))

	rec := &recorder{}
	metrics := store.NewMetrics()
	ws := store.NewWatchStore("nodes", clusterNodeFactory, rec, store.WithMetrics(metrics))
	run := func() (stop func()) {
		wctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { ws.Watch(wctx, b, nodesPrefix) })
		return func() { cancel(); wg.Wait() }
	}
	stop := run()
	celltest.Eventually(t, "the first list", ws.Synced)
	st := ws.SkipStats()
	if st.Malformed != 2 || st.Refused != 1 || st.Last.Key == "" {
		t.Errorf("SkipStats = %+v, want 2 malformed, 1 refused and a last one", st)
	}
	var got []string
	for _, e := range ws.Skipped() {
		got = append(got, fmt.Sprintf("%s %s", strings.TrimPrefix(e.Key, nodesPrefix+"/"), e.Reason))
	}
	if want := "bad-json malformed, foreign refused, wrong-name malformed"; strings.Join(got, ", ") != want {
		t.Errorf("Skipped = %s, want %s", strings.Join(got, ", "), want)
	}
	if !ws.IsSkipped("foreign") || ws.IsSkipped("a") {
		t.Errorf("IsSkipped(foreign)=%v IsSkipped(a)=%v", ws.IsSkipped("foreign"), ws.IsSkipped("a"))
	}

	// A good key turning bad keeps its value and is listed; a bad key
	// fixed or deleted leaves the list.
	put("a", `nonsense`)
	put("wrong-name", jsonNode("wrong-name", "10.0.0.2"))
	must(t, b.Delete(ctx(t), nodesPrefix+"/bad-json"))
	celltest.Eventually(t, "the list to follow", func() bool {
		st := ws.SkipStats()
		return st.Malformed == 1 && st.Refused == 1 && ws.IsSkipped("a")
	})
	if k, ok := ws.Get("a"); !ok || k.(*node).IP != "10.0.0.1" {
		t.Errorf("a = %v, %v: want its last good value", k, ok)
	}
	stop()

	// Listed again after a restart: not counted twice; a bad key deleted
	// meanwhile leaves the list.
	must(t, b.Delete(ctx(t), nodesPrefix+"/foreign"))
	stop = run()
	defer stop()
	celltest.Eventually(t, "the stale skipped key to go", func() bool { return !ws.IsSkipped("foreign") })
	for reason, want := range map[string]float64{"malformed": 3, "refused": 1} {
		if n := testutil.ToFloat64(metrics.Skipped.WithLabelValues("nodes", reason)); n != want {
			t.Errorf("skipped %s counted %v, want %v", reason, n, want)
		}
	}
}

// countingHandler counts the log records with one message.
type countingHandler struct {
	msg string
	n   *atomic.Int32
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

// TestWatchStoreRateLimitsSkipLogs: a writer spraying bad keys gets every
// one counted but only a burst logged.
func TestWatchStoreRateLimitsSkipLogs(t *testing.T) {
	mem := kvstoretest.NewMemory().NewBackend()
	defer mem.Close()
	for i := range 100 {
		must(t, mem.Update(ctx(t), fmt.Sprintf("%s/bad-%03d", nodesPrefix, i), []byte("{"), false))
	}
	var logged atomic.Int32
	ws := store.NewWatchStore("nodes", nodeFactory, &recorder{},
		store.WithLogger(slog.New(countingHandler{msg: "Skipping kvstore entry", n: &logged})))
	wctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ws.Watch(wctx, mem, nodesPrefix) })
	defer func() { cancel(); wg.Wait() }()
	celltest.Eventually(t, "the first list", ws.Synced)
	if st := ws.SkipStats(); st.Malformed != 100 {
		t.Errorf("%d malformed counted, want 100", st.Malformed)
	}
	// A burst of 10, plus one for each 6s the list took.
	if n := logged.Load(); n < 10 || n > 12 {
		t.Errorf("%d log lines for 100 skipped entries, want about 10", n)
	}
}
