package status_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
)

// slowProbe answers its first call at once and blocks later calls until
// release is closed.
type slowProbe struct {
	calls   atomic.Int32
	release chan struct{}
}

func (s *slowProbe) probe(ctx context.Context) status.Report {
	if s.calls.Add(1) == 1 {
		return status.Report{State: status.Ok, Message: "fine", Details: []string{"detail kept"}}
	}
	select {
	case <-s.release:
		return status.Report{State: status.Ok, Message: "recovered"}
	case <-ctx.Done():
		return status.Report{State: status.Failure, Message: "cancelled"}
	}
}

func entry(t *testing.T, st models.Status, name string) models.StatusEntry {
	t.Helper()
	for _, e := range st.Entries {
		if e.Name == name {
			return e
		}
	}
	t.Fatalf("no status entry %q in %+v", name, st.Entries)
	return models.StatusEntry{}
}

func TestProbeTiming(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var fastCalls atomic.Int32
		slow := &slowProbe{release: make(chan struct{})}
		probes := cell.Module("probes", "Test probes", cell.Provide(
			func(m cell.FullModuleID) status.ProviderOut {
				return status.NewProviderOut(m, "Fast", func(context.Context) status.Report {
					n := fastCalls.Add(1)
					return status.Report{State: status.Ok, Message: fmt.Sprintf("call %d", n)}
				})
			},
			func(m cell.FullModuleID) status.ProviderOut { return status.NewProviderOut(m, "Slow", slow.probe) },
		))
		var c status.Collector
		celltest.Start(t, status.Cell, probes, celltest.Capture(&c))
		start := time.Now()
		at := func(d time.Duration) {
			time.Sleep(time.Until(start.Add(d)))
			synctest.Wait()
		}

		at(0)
		if got := entry(t, c.Status(), "Slow"); got.State != status.Ok || got.Message != "fine" || got.LastProbe == nil {
			t.Fatalf("at start: Slow = %+v, want Ok fine", got)
		}
		at(5 * time.Second) // second probe of Slow begins and blocks
		at(10 * time.Second)
		if n := slow.calls.Load(); n != 2 {
			t.Errorf("at 10s: Slow probed %d times, want 2 (one still in flight)", n)
		}
		if n := fastCalls.Load(); n != 3 {
			t.Errorf("at 10s: Fast probed %d times, want 3 (0s, 5s, 10s)", n)
		}
		at(19 * time.Second)
		if got := entry(t, c.Status(), "Slow"); got.Stale || got.State != status.Ok {
			t.Errorf("at 19s: Slow = %+v, want still Ok (stale only after 15s)", got)
		}

		at(20 * time.Second)
		st := c.Status()
		got := entry(t, st, "Slow")
		wantSince := start.Add(20 * time.Second)
		if !got.Stale || got.State != status.Failure || got.StaleSince == nil || !got.StaleSince.Equal(wantSince) {
			t.Errorf("at 20s: Slow = %+v, want a stale Failure since %v", got, wantSince)
		}
		if want := "probe stale since " + wantSince.Format(time.RFC3339) + ", no answer for 15s"; got.Message != want {
			t.Errorf("at 20s: message = %q, want %q", got.Message, want)
		}
		if len(got.Details) != 2 || !strings.HasSuffix(got.Details[0], ": Ok: fine") || got.Details[1] != "detail kept" {
			t.Errorf("at 20s: details = %q, want the last answer kept", got.Details)
		}
		if st.State != status.Failure {
			t.Errorf("at 20s: overall = %s, want Failure", st.State)
		}
		if fast := entry(t, st, "Fast"); fast.State != status.Ok || fast.Message != "call 5" {
			t.Errorf("at 20s: Fast = %+v, want Ok call 5 (not held up by Slow)", fast)
		}
		if n := slow.calls.Load(); n != 2 {
			t.Errorf("at 20s: Slow probed %d times, want 2 (never two in flight)", n)
		}

		close(slow.release)
		synctest.Wait()
		got = entry(t, c.Status(), "Slow")
		if got.Stale || got.State != status.Ok || got.Message != "recovered" || got.ProbeDuration != models.Duration(15*time.Second) {
			t.Errorf("after release: Slow = %+v, want Ok recovered after 15s", got)
		}
		at(25 * time.Second)
		if n := slow.calls.Load(); n != 3 {
			t.Errorf("at 25s: Slow probed %d times, want 3 (probing resumed)", n)
		}
	})
}

func TestPendingAndStaleWithoutAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		never := cell.Provide(func(m cell.FullModuleID) status.ProviderOut {
			return status.NewProviderOut(m, "Never", func(ctx context.Context) status.Report {
				<-ctx.Done()
				return status.Report{}
			})
		})
		var c status.Collector
		celltest.Start(t, status.Cell, never, celltest.Capture(&c))
		got := entry(t, c.Status(), "Never")
		if got.State != status.Warning || got.Message != "waiting for the first probe to answer" || got.LastProbe != nil {
			t.Errorf("before any answer: %+v, want a pending Warning", got)
		}
		time.Sleep(status.StaleAfter)
		synctest.Wait()
		got = entry(t, c.Status(), "Never")
		if !got.Stale || got.State != status.Failure || len(got.Details) != 1 || got.Details[0] != "no answer yet" {
			t.Errorf("after %s: %+v, want a stale Failure with no answer yet", status.StaleAfter, got)
		}
	})
}

func TestProbeProblems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		probes := cell.Provide(
			func() status.ProviderOut {
				return status.NewProviderOut(nil, "Panics", func(context.Context) status.Report { panic("oops") })
			},
			func() status.ProviderOut {
				return status.NewProviderOut(nil, "Stateless", func(context.Context) status.Report {
					return status.Report{Message: "forgot the state"}
				})
			},
		)
		var c status.Collector
		celltest.Start(t, status.Cell, probes, celltest.Capture(&c))
		synctest.Wait()
		st := c.Status()
		if got := entry(t, st, "Panics"); got.State != status.Failure || got.Message != "probe panicked: oops" {
			t.Errorf("Panics = %+v, want a Failure", got)
		}
		if got := entry(t, st, "Stateless"); got.State != status.Failure || got.Message != "forgot the state" {
			t.Errorf("Stateless = %+v, want a Failure keeping the message", got)
		}
	})
}

// TestSettleAfterStart checks that during the first 30s a provider that
// is not Ok yet is probed every second, so a subsystem that connects
// just after start shows Ok within a second, and that afterwards a
// provider that stays down is probed at the normal interval only.
func TestSettleAfterStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var connecting, down atomic.Int32
		var start time.Time
		probes := cell.Module("probes", "Test probes", cell.Provide(
			func(m cell.FullModuleID) status.ProviderOut {
				return status.NewProviderOut(m, "Connecting", func(context.Context) status.Report {
					connecting.Add(1)
					if time.Since(start) < 2500*time.Millisecond {
						return status.Report{State: status.Warning, Message: "connecting"}
					}
					return status.Report{State: status.Ok, Message: "connected"}
				})
			},
			func(m cell.FullModuleID) status.ProviderOut {
				return status.NewProviderOut(m, "Down", func(context.Context) status.Report {
					down.Add(1)
					return status.Report{State: status.Failure, Message: "down"}
				})
			},
		))
		var c status.Collector
		start = time.Now()
		celltest.Start(t, status.Cell, probes, celltest.Capture(&c))
		at := func(d time.Duration) {
			time.Sleep(time.Until(start.Add(d)))
			synctest.Wait()
		}
		at(2 * time.Second)
		if got := entry(t, c.Status(), "Connecting"); got.State != status.Warning {
			t.Errorf("at 2s: Connecting = %s %q, want Warning", got.State, got.Message)
		}
		at(3 * time.Second)
		if got := entry(t, c.Status(), "Connecting"); got.State != status.Ok || connecting.Load() != 4 {
			t.Errorf("at 3s: Connecting = %s %q after %d probes; want Ok after 4 (0s, 1s, 2s, 3s)", got.State, got.Message, connecting.Load())
		}
		at(4900 * time.Millisecond)
		if n := connecting.Load(); n != 4 {
			t.Errorf("at 4.9s: Connecting probed %d times, want still 4 (Ok: back to the normal interval)", n)
		}
		at(40 * time.Second)
		before := down.Load()
		at(49 * time.Second)
		if n := down.Load() - before; n != 1 {
			t.Errorf("Down probed %d times between 40s and 49s, want 1 (settle period over)", n)
		}
	})
}

// TestRefreshProbesNow: a subsystem whose state changed calls Refresh,
// and the lines are probed again within half a second instead of at the
// next round five seconds later; a burst of calls makes one round.
func TestRefreshProbesNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		probes := cell.Module("probes", "Test probes", cell.Provide(
			func(m cell.FullModuleID) status.ProviderOut {
				return status.NewProviderOut(m, "Mesh", func(context.Context) status.Report {
					n := calls.Add(1)
					return status.Report{State: status.Ok, Message: fmt.Sprintf("call %d", n)}
				})
			},
		))
		var c status.Collector
		var r status.Refresher
		celltest.Start(t, status.Cell, probes, celltest.Capture(&c), celltest.Capture(&r))
		time.Sleep(time.Second)
		synctest.Wait()
		if n := calls.Load(); n != 1 {
			t.Fatalf("probed %d times in the first second, want 1", n)
		}
		for range 5 {
			r.Refresh()
		}
		time.Sleep(600 * time.Millisecond)
		synctest.Wait()
		if n := calls.Load(); n != 2 {
			t.Fatalf("probed %d times 0.6 s after five Refresh calls, want 2 (one round, before the 5 s timer)", n)
		}
		if got := entry(t, c.Status(), "Mesh"); got.Message != "call 2" {
			t.Errorf("line %q after the refresh, want call 2", got.Message)
		}
	})
}
