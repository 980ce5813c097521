package monitor_test

import (
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
)

// chanSource is a Source fed by a test.
type chanSource struct {
	ch chan eventsmap.Event
}

func (s chanSource) Read() (eventsmap.Event, error) {
	ev, ok := <-s.ch
	if !ok {
		return eventsmap.Event{}, eventsmap.ErrClosed
	}
	if ev.Type == 0 {
		return eventsmap.Event{}, fmt.Errorf("decode event: garbage")
	}
	return ev, nil
}

// idTable is an identity cache of two identities.
type idTable map[identity.NumericIdentity]labels.Labels

func (t idTable) LookupIdentityByID(id identity.NumericIdentity) *identity.Identity {
	if l, ok := t[id]; ok {
		return &identity.Identity{ID: id, Labels: l}
	}
	return nil
}

var ids = idTable{
	1000: labels.Labels{{Source: "k8s", Key: "app", Value: "web"}},
	2001: labels.Labels{{Source: "k8s", Key: "app", Value: "client"}},
}

func drop(n uint32) eventsmap.Event {
	return eventsmap.Event{Type: eventsmap.TypeDrop, Reason: eventsmap.ReasonPolicy, SrcIdentity: 2001, DstIdentity: 1000, Len: n}
}

func verdict(n uint32) eventsmap.Event {
	return eventsmap.Event{Type: eventsmap.TypePolicyVerdict, Allowed: true, SrcIdentity: 2001, DstIdentity: 1000, Len: n}
}

// running starts m.Run on a test source; the returned function closes
// the source and waits for Run to return.
func running(m *monitor.Monitor) (chan<- eventsmap.Event, func()) {
	src := chanSource{ch: make(chan eventsmap.Event)}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.Run(slog.New(slog.NewTextHandler(io.Discard, nil)), src, ids, func() time.Time { return time.Unix(1, 0) })
	}()
	return src.ch, func() { close(src.ch); wg.Wait() }
}

func receive(t *testing.T, sub *monitor.Subscription) monitor.Event {
	t.Helper()
	select {
	case ev := <-sub.Events():
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	panic("unreachable")
}

func TestFanOutWithLabelsAndTypes(t *testing.T) {
	m := monitor.New()
	all, err := m.Subscribe(monitor.AllTypes, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	drops, err := m.Subscribe(monitor.Types{Drop: true}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer drops.Close()
	src, stop := running(m)
	defer stop()

	src <- verdict(1)
	src <- eventsmap.Event{} // does not decode: skipped
	src <- drop(2)

	for _, want := range []eventsmap.Event{verdict(1), drop(2)} {
		got := receive(t, all)
		if got.Event != want {
			t.Errorf("all-types subscriber got %+v, want %+v", got.Event, want)
		}
		if got.SrcLabels.String() != ids[2001].String() || got.DstLabels.String() != ids[1000].String() {
			t.Errorf("labels %v -> %v, want %v -> %v", got.SrcLabels, got.DstLabels, ids[2001], ids[1000])
		}
		if !got.Time.Equal(time.Unix(1, 0)) {
			t.Errorf("time %v, want the injected clock's", got.Time)
		}
	}
	if got := receive(t, drops); got.Event != drop(2) {
		t.Errorf("drop subscriber got %+v, want the drop only", got.Event)
	}
	if n := all.TakeLost() + drops.TakeLost(); n != 0 {
		t.Errorf("%d events lost with room in the buffers", n)
	}
}

func TestUnknownIdentityHasNoLabels(t *testing.T) {
	m := monitor.New()
	sub, _ := m.Subscribe(monitor.AllTypes, 0)
	defer sub.Close()
	src, stop := running(m)
	defer stop()
	src <- eventsmap.Event{Type: eventsmap.TypeDrop, SrcIdentity: 4242, DstIdentity: 1000}
	got := receive(t, sub)
	if got.SrcLabels != nil || got.DstLabels.String() != ids[1000].String() {
		t.Errorf("labels %v -> %v, want none -> %v", got.SrcLabels, got.DstLabels, ids[1000])
	}
}

// TestSlowSubscriberLosesEventsAndIsTold: a subscriber that does not
// read loses what overflows its buffer, counted, while the reader and a
// fast subscriber go on.
func TestSlowSubscriberLosesEventsAndIsTold(t *testing.T) {
	m := monitor.New()
	slow, _ := m.Subscribe(monitor.AllTypes, 4)
	defer slow.Close()
	fast, _ := m.Subscribe(monitor.AllTypes, 4)
	defer fast.Close()
	src, stop := running(m)
	defer stop()

	const n = 100
	for i := range uint32(n) {
		src <- drop(i) // returns only once the reader took it: the reader never blocks on slow
		if got := receive(t, fast); got.Len != i {
			t.Fatalf("fast subscriber got event %d, want %d", got.Len, i)
		}
	}
	select {
	case <-slow.Lost():
	default:
		t.Fatal("Lost() not signalled after overflowing")
	}
	if st := m.Stats(); st.Drops != n || st.Lost != n-4 || st.Subscribers != 2 {
		t.Errorf("Stats() = %+v, want %d drops, %d lost, 2 subscribers", st, n, n-4)
	}
	if got := slow.TakeLost(); got != n-4 {
		t.Errorf("TakeLost() = %d, want %d", got, n-4)
	}
	if got := slow.TakeLost(); got != 0 {
		t.Errorf("second TakeLost() = %d, want 0", got)
	}
	for i := range uint32(4) { // the first events stay, in order
		if got := receive(t, slow); got.Len != i {
			t.Errorf("slow subscriber's event %d is %d", i, got.Len)
		}
	}
}

func TestStopEndsSubscriptions(t *testing.T) {
	m := monitor.New()
	sub, _ := m.Subscribe(monitor.AllTypes, 0)
	closed, _ := m.Subscribe(monitor.AllTypes, 0)
	closed.Close()
	if got := m.Subscribers(); got != 1 {
		t.Errorf("%d subscribers after one closed, want 1", got)
	}
	_, stop := running(m)
	stop()
	m.Stop()
	select {
	case <-sub.Done():
	default:
		t.Error("Done() not closed after Stop")
	}
	sub.Close() // after Stop: no panic
	if _, err := m.Subscribe(monitor.AllTypes, 0); err != monitor.ErrStopped {
		t.Errorf("Subscribe after Stop = %v, want ErrStopped", err)
	}
}

// TestOnVerdictSubscribers: the hook hears when the first subscription
// selecting policy verdicts opens and when the last one goes; drop-only
// subscriptions do not count.
func TestOnVerdictSubscribers(t *testing.T) {
	m := monitor.New()
	var got []bool
	m.OnVerdictSubscribers(func(on bool) { got = append(got, on) })
	sub := func(types monitor.Types) *monitor.Subscription {
		t.Helper()
		s, err := m.Subscribe(types, 1)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	drops := sub(monitor.Types{Drop: true})
	all := sub(monitor.Types{})
	verdicts := sub(monitor.Types{PolicyVerdict: true})
	all.Close()
	all.Close() // twice: counted once
	drops.Close()
	verdicts.Close()
	again := sub(monitor.AllTypes)
	m.Stop()
	again.Close() // after Stop: nothing more
	want := []bool{true, false, true, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hook calls %v, want %v", got, want)
	}
}
