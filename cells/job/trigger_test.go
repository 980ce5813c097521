package job_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/job"
)

// triggerRun is one run of a trigger's function.
type triggerRun struct {
	at      time.Duration
	reasons []string
}

func (r triggerRun) String() string { return fmt.Sprintf("%s%v", r.at, r.reasons) }

// triggerRecorder records the runs of a trigger's function.
type triggerRecorder struct {
	start time.Time
	mu    sync.Mutex
	list  []triggerRun
}

func newTriggerRecorder() *triggerRecorder { return &triggerRecorder{start: time.Now()} }

func (r *triggerRecorder) record(reasons []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, triggerRun{at: time.Since(r.start), reasons: reasons})
	return len(r.list)
}

func (r *triggerRecorder) fn(_ context.Context, reasons []string) error {
	r.record(reasons)
	return nil
}

func (r *triggerRecorder) runs() []triggerRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

func (r *triggerRecorder) want(t *testing.T, want ...triggerRun) {
	t.Helper()
	got := r.runs()
	if !slices.EqualFunc(got, want, func(a, b triggerRun) bool {
		return a.at == b.at && slices.Equal(a.reasons, b.reasons)
	}) {
		t.Fatalf("runs %v, want %v", got, want)
	}
}

func run(at float64, reasons ...string) triggerRun {
	return triggerRun{at: celltest.Secs(at)[0], reasons: reasons}
}

func TestTriggerCoalescing(t *testing.T) {
	celltest.InBubble(t, "a burst fires once after the quiet period", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		trig := job.NewTrigger("regenerate", runs.fn, job.TriggerParams{After: time.Second})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		trig.Trigger("policy")
		time.Sleep(500 * time.Millisecond)
		trig.Trigger("ipcache")
		time.Sleep(400 * time.Millisecond)
		trig.Trigger("policy")
		time.Sleep(999 * time.Millisecond)
		runs.want(t) // quiet for less than After
		time.Sleep(time.Hour)
		runs.want(t, run(1.9, "policy", "ipcache"))
	})
	celltest.InBubble(t, "a continuous stream fires no later than max after its first event", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		const after, maxDelay = time.Second, 3 * time.Second
		trig := job.NewTrigger("regenerate", runs.fn, job.TriggerParams{After: after, Max: maxDelay})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		sent := map[string]time.Duration{}
		for i := range 21 { // every After/2 for 10s
			reason := fmt.Sprintf("event-%d", i)
			sent[reason] = time.Since(runs.start)
			trig.Trigger(reason)
			time.Sleep(after / 2)
		}
		time.Sleep(time.Hour)
		got := runs.runs()
		if len(got) == 0 || got[0].at != maxDelay {
			t.Fatalf("runs %v, want the first at %s", got, maxDelay)
		}
		delivered := map[string]int{}
		for _, r := range got {
			first := time.Duration(1<<63 - 1)
			for _, reason := range r.reasons {
				delivered[reason]++
				first = min(first, sent[reason])
			}
			if r.at-first > maxDelay {
				t.Errorf("run %v fired %s after its first event, want at most %s", r, r.at-first, maxDelay)
			}
		}
		if len(delivered) != len(sent) {
			t.Errorf("%d of %d events delivered: %v", len(delivered), len(sent), got)
		}
		for reason, n := range delivered {
			if n != 1 {
				t.Errorf("%s delivered %d times, want once", reason, n)
			}
		}
	})
	celltest.InBubble(t, "reasons are deduplicated in arrival order", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		trig := job.NewTrigger("regenerate", runs.fn, job.TriggerParams{})
		f.group.Add(trig)
		for _, reason := range []string{"b", "a", "b", "c", "a"} {
			trig.Trigger(reason)
		}
		f.Start()
		defer f.Stop()
		time.Sleep(time.Hour)
		runs.want(t, run(0, "b", "a", "c"))
		f.WantHealth("job-regenerate", cell.LevelOK, "last run folded 5 event(s)", "")
	})
	celltest.InBubble(t, "events during a run make exactly one more run", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		release := make(chan struct{})
		trig := job.NewTrigger("regenerate", func(_ context.Context, reasons []string) error {
			if runs.record(reasons) == 1 {
				<-release
			}
			return nil
		}, job.TriggerParams{})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		trig.Trigger("first")
		for _, reason := range []string{"x", "first", "x"} {
			time.Sleep(time.Second)
			trig.Trigger(reason)
		}
		time.Sleep(7 * time.Second)
		close(release)
		time.Sleep(time.Hour)
		runs.want(t, run(0, "first"), run(10, "x", "first"))
	})
}

func TestTriggerRuns(t *testing.T) {
	celltest.InBubble(t, "never overlap", func(t *testing.T) {
		f := newFixture(t)
		runs := celltest.NewClock()
		var running, overlaps atomic.Int32
		trig := job.NewTrigger("regenerate", func(context.Context, []string) error {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			runs.Record()
			time.Sleep(100 * time.Millisecond)
			running.Add(-1)
			return nil
		}, job.TriggerParams{})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		var senders sync.WaitGroup
		for i, every := range []time.Duration{30 * time.Millisecond, 70 * time.Millisecond, 110 * time.Millisecond} {
			senders.Go(func() {
				for range int(5 * time.Second / every) {
					trig.Trigger(fmt.Sprintf("sender-%d", i))
					time.Sleep(every)
				}
			})
		}
		senders.Wait()
		time.Sleep(time.Second)
		if n := overlaps.Load(); n != 0 {
			t.Errorf("%d runs started while another was running", n)
		}
		times := runs.Times()
		if len(times) < 40 {
			t.Errorf("%d runs in 5s of events, want one every 100ms", len(times))
		}
		for i := 1; i < len(times); i++ {
			if gap := times[i] - times[i-1]; gap < 100*time.Millisecond {
				t.Errorf("run %d started %s after the previous one, which takes 100ms", i, gap)
			}
		}
	})
	celltest.InBubble(t, "min interval spaces the starts of runs", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		trig := job.NewTrigger("regenerate", runs.fn, job.TriggerParams{MinInterval: 5 * time.Second})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		for _, at := range []time.Duration{0, time.Second, 6 * time.Second, 20 * time.Second} {
			time.Sleep(at - time.Since(runs.start))
			trig.Trigger(at.String())
		}
		time.Sleep(time.Hour)
		runs.want(t, run(0, "0s"), run(5, "1s"), run(10, "6s"), run(20, "20s"))
	})
	celltest.InBubble(t, "errors degrade health until a run succeeds", func(t *testing.T) {
		f := newFixture(t)
		var calls atomic.Int32
		trig := job.NewTrigger("regenerate", func(context.Context, []string) error {
			if calls.Add(1) == 1 {
				return errUnreachable
			}
			return nil
		}, job.TriggerParams{})
		f.group.Add(trig)
		f.Start()
		defer f.Stop()
		synctest.Wait()
		f.WantHealth("job-regenerate", cell.LevelOK, "idle", "")
		trig.Trigger("a")
		synctest.Wait()
		f.WantHealth("job-regenerate", cell.LevelDegraded, "last run failed", errUnreachable.Error())
		trig.Trigger("b")
		trig.Trigger("c")
		synctest.Wait()
		f.WantHealth("job-regenerate", cell.LevelOK, "last run folded 2 event(s)", "")
	})
	celltest.InBubble(t, "a pending burst does not run after stop", func(t *testing.T) {
		f := newFixture(t)
		runs := newTriggerRecorder()
		trig := job.NewTrigger("regenerate", runs.fn, job.TriggerParams{After: time.Minute})
		f.group.Add(trig)
		f.Start()
		trig.Trigger("a")
		time.Sleep(time.Second)
		f.Stop()
		time.Sleep(time.Hour)
		runs.want(t)
		f.WantHealth("job-regenerate", cell.LevelStopped, "stopped with the hive", "")
	})
}

func TestNewTriggerPanics(t *testing.T) {
	tests := []struct {
		name string
		give job.TriggerParams
	}{
		{name: "negative after", give: job.TriggerParams{After: -time.Second}},
		{name: "negative max", give: job.TriggerParams{Max: -time.Second}},
		{name: "negative min interval", give: job.TriggerParams{MinInterval: -time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("NewTrigger(%+v) did not panic", tt.give)
				}
			}()
			job.NewTrigger("regenerate", func(context.Context, []string) error { return nil }, tt.give)
		})
	}
}
