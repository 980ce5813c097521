package monitor

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
)

// DefaultBuffer is the number of events a subscriber may be behind
// before it loses events.
const DefaultBuffer = 1024

// ErrStopped is returned by Subscribe once the monitor has stopped.
var ErrStopped = errors.New("monitor stopped")

// Monitor fans events out to subscribers. Publish never blocks.
type Monitor struct {
	mu      sync.Mutex
	subs    map[*Subscription]struct{}
	stopped bool
	// verdictSubs counts the subscriptions selecting policy verdicts;
	// onVerdicts hears when it leaves or returns to 0.
	verdictSubs int
	onVerdicts  func(listening bool)
	// traceSubs and onTraces do the same for traces.
	traceSubs int
	onTraces  func(listening bool)

	drops, verdicts, traces, lost atomic.Uint64
}

// Stats are the monitor's counters since it was created.
type Stats struct {
	// Drops, Verdicts and Traces count the events published, by type.
	Drops, Verdicts, Traces uint64
	// Lost counts the events subscribers lost (one per subscriber).
	Lost uint64
	// Subscribers is the number of open subscriptions.
	Subscribers int
}

// Stats returns the monitor's counters.
func (m *Monitor) Stats() Stats {
	return Stats{Drops: m.drops.Load(), Verdicts: m.verdicts.Load(), Traces: m.traces.Load(), Lost: m.lost.Load(), Subscribers: m.Subscribers()}
}

// New returns a monitor without subscribers.
func New() *Monitor {
	return &Monitor{subs: make(map[*Subscription]struct{})}
}

// OnVerdictSubscribers sets fn, called with true when the first open
// subscription selecting policy verdicts appears and with false when the
// last one goes (or the monitor stops), under the monitor's lock so that
// calls come in order. The monitor cell sets the datapath's verdict-event
// flag with it: the programs report allowed flows only while someone
// listens. Set it before the first Subscribe.
func (m *Monitor) OnVerdictSubscribers(fn func(listening bool)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onVerdicts = fn
}

// OnTraceSubscribers is OnVerdictSubscribers for subscriptions selecting
// traces: the monitor cell sets the datapath's trace-event flag with it.
func (m *Monitor) OnTraceSubscribers(fn func(listening bool)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onTraces = fn
}

// addSub and dropSub count a subscription of types; m.mu is held.
func (m *Monitor) addSub(types Types) {
	if types.has(eventsmap.TypePolicyVerdict) {
		m.addVerdictSub()
	}
	if types.has(eventsmap.TypeTrace) {
		m.traceSubs++
		if m.traceSubs == 1 && m.onTraces != nil {
			m.onTraces(true)
		}
	}
}

func (m *Monitor) dropSub(types Types) {
	if types.has(eventsmap.TypePolicyVerdict) {
		m.dropVerdictSub()
	}
	if types.has(eventsmap.TypeTrace) {
		m.traceSubs--
		if m.traceSubs == 0 && m.onTraces != nil {
			m.onTraces(false)
		}
	}
}

// addVerdictSub and dropVerdictSub count a subscription selecting
// verdicts; m.mu is held.
func (m *Monitor) addVerdictSub() {
	m.verdictSubs++
	if m.verdictSubs == 1 && m.onVerdicts != nil {
		m.onVerdicts(true)
	}
}

func (m *Monitor) dropVerdictSub() {
	m.verdictSubs--
	if m.verdictSubs == 0 && m.onVerdicts != nil {
		m.onVerdicts(false)
	}
}

// Subscriber hands out subscriptions; *Monitor is one.
type Subscriber interface {
	Subscribe(types Types, buffer int) (*Subscription, error)
}

var _ Subscriber = (*Monitor)(nil)

// Subscription receives the events of the selected types, up to a
// bounded number ahead of its reader.
type Subscription struct {
	m     *Monitor
	types Types
	ch    chan Event
	lost  atomic.Uint64
	lostC chan struct{} // signalled (capacity 1) when an event is lost
	done  chan struct{} // closed by Close or when the monitor stops
	once  sync.Once
}

// Subscribe returns a subscription to the events of types that holds up
// to buffer events (DefaultBuffer when buffer < 1) its reader has not
// taken yet. Close it when done.
func (m *Monitor) Subscribe(types Types, buffer int) (*Subscription, error) {
	if buffer < 1 {
		buffer = DefaultBuffer
	}
	s := &Subscription{
		m: m, types: types, ch: make(chan Event, buffer),
		lostC: make(chan struct{}, 1), done: make(chan struct{}),
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.stopped {
		return nil, ErrStopped
	}
	m.subs[s] = struct{}{}
	m.addSub(types)
	return s, nil
}

// Subscribers returns the number of open subscriptions.
func (m *Monitor) Subscribers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.subs)
}

// Publish hands ev to every subscriber that selects its type. A
// subscriber whose buffer is full loses it (see TakeLost).
func (m *Monitor) Publish(ev Event) {
	switch ev.Type {
	case eventsmap.TypeDrop:
		m.drops.Add(1)
	case eventsmap.TypePolicyVerdict:
		m.verdicts.Add(1)
	case eventsmap.TypeTrace:
		m.traces.Add(1)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.subs {
		if !s.types.has(ev.Type) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			s.lost.Add(1)
			m.lost.Add(1)
			select {
			case s.lostC <- struct{}{}:
			default:
			}
		}
	}
}

// Stop ends every subscription (their Done channels close) and refuses
// new ones.
func (m *Monitor) Stop() {
	m.mu.Lock()
	subs := m.subs
	m.subs = make(map[*Subscription]struct{})
	m.stopped = true
	if m.verdictSubs > 0 {
		m.verdictSubs = 1
		m.dropVerdictSub()
	}
	if m.traceSubs > 0 && m.onTraces != nil {
		m.onTraces(false)
	}
	m.traceSubs = 0
	m.mu.Unlock()
	for s := range subs {
		s.end()
	}
}

// Events delivers the subscription's events in the order they were read.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Lost is signalled when the subscription loses an event; TakeLost then
// says how many were lost.
func (s *Subscription) Lost() <-chan struct{} { return s.lostC }

// TakeLost returns the number of events lost since the previous call.
func (s *Subscription) TakeLost() uint64 { return s.lost.Swap(0) }

// Done is closed when the subscription ends: Close, or the monitor
// stopped.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Close ends the subscription.
func (s *Subscription) Close() {
	s.m.mu.Lock()
	if _, ok := s.m.subs[s]; ok {
		delete(s.m.subs, s)
		s.m.dropSub(s.types)
	}
	s.m.mu.Unlock()
	s.end()
}

func (s *Subscription) end() { s.once.Do(func() { close(s.done) }) }
