package kvstore_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

func put(t *testing.T, c *clientv3.Client, k, v string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Put(ctx, k, v); err != nil {
		t.Fatal(err)
	}
}

func del(t *testing.T, c *clientv3.Client, k string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
}

// state applies events to a map, failing on impossible sequences (a
// create of a known key, a modify or delete of an unknown one).
type state map[string]string

func (s state) apply(t *testing.T, ev kvstore.Event) {
	t.Helper()
	_, known := s[ev.Key]
	switch ev.Type {
	case kvstore.EventCreate:
		if known {
			t.Errorf("duplicate create of %s", ev.Key)
		}
		s[ev.Key] = string(ev.Value)
	case kvstore.EventModify:
		if !known {
			t.Errorf("modify of unknown %s", ev.Key)
		}
		s[ev.Key] = string(ev.Value)
	case kvstore.EventDelete:
		if !known {
			t.Errorf("delete of unknown %s", ev.Key)
		}
		delete(s, ev.Key)
	}
}

// waitFor applies events until the state equals want.
func (s state) waitFor(t *testing.T, ch <-chan kvstore.Event, want map[string]string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for !equal(s, want) {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatal("watch closed")
			}
			s.apply(t, ev)
		case <-deadline:
			t.Fatalf("state = %v, want %v", s, want)
		}
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func startWatch(t *testing.T, b kvstore.Backend, prefix string) (<-chan kvstore.Event, state) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := b.ListAndWatch(ctx, prefix)
	st := state{}
	for ev := range ch {
		if ev.Type == kvstore.EventListDone {
			return ch, st
		}
		st.apply(t, ev)
	}
	t.Fatal("watch closed before ListDone")
	return nil, nil
}

func TestWatchSurvivesEtcdRestart(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, "cilium/state/w/a", "1")
	put(t, raw, "cilium/state/w/b", "2")
	ch, st := startWatch(t, srv.NewBackend(), "cilium/state/w/")

	srv.Restart()
	raw = srv.Client()
	put(t, raw, "cilium/state/w/a", "1b")
	del(t, raw, "cilium/state/w/b")
	put(t, raw, "cilium/state/w/c", "3")
	st.waitFor(t, ch, map[string]string{"cilium/state/w/a": "1b", "cilium/state/w/c": "3"})
	expectQuiet(t, ch)
}

func TestWatchRelistsAfterCompaction(t *testing.T) {
	// A long retry wait keeps the watcher away while the history it
	// needs is compacted.
	defer kvstore.SetWatchRetryForTest(3*time.Second, 3*time.Second)()
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, "cilium/state/w/a", "1")
	put(t, raw, "cilium/state/w/b", "2")
	put(t, raw, "cilium/state/w/same", "unchanged")
	logs := &syncBuffer{}
	b := srv.NewBackend(func(o *kvstore.EtcdOptions) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	ch, st := startWatch(t, b, "cilium/state/w/")

	srv.Stop()
	time.Sleep(500 * time.Millisecond) // let the watch fail and back off
	srv.Start()
	raw = srv.Client()
	put(t, raw, "cilium/state/w/a", "1b")
	del(t, raw, "cilium/state/w/b")
	put(t, raw, "cilium/state/w/c", "3")
	srv.Compact()

	st.waitFor(t, ch, map[string]string{
		"cilium/state/w/a": "1b", "cilium/state/w/c": "3", "cilium/state/w/same": "unchanged",
	})
	expectQuiet(t, ch)
	if !strings.Contains(logs.String(), "Watch revision compacted, listing again") {
		t.Errorf("the watcher did not take the re-list path; logs:\n%s", logs)
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// expectQuiet fails if more events arrive: a re-list must not repeat
// keys that did not change.
func expectQuiet(t *testing.T, ch <-chan kvstore.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Errorf("unexpected extra event %s %s", ev.Type, ev.Key)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestWatchEventsCarryNames: etcd's events name their key below the
// watched prefix, from the list and from the watch, deletes included.
func TestWatchEventsCarryNames(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	put(t, raw, "cilium/state/n/a", "1")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ch := srv.NewBackend().ListAndWatch(ctx, "cilium/state/n/")
	var got []string
	for ev := range ch {
		if ev.Type != kvstore.EventListDone {
			got = append(got, ev.Type.String()+" "+ev.Key+" "+ev.Name)
		}
		switch len(got) {
		case 1:
			if ev.Type == kvstore.EventListDone {
				put(t, raw, "cilium/state/n/b/c", "2")
				del(t, raw, "cilium/state/n/a")
			}
		case 3:
			cancel()
		}
	}
	want := []string{"create cilium/state/n/a a", "create cilium/state/n/b/c b/c", "delete cilium/state/n/a a"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("events = %q, want %q", got, want)
	}
}
