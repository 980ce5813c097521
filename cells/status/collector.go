package status

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
)

const (
	// ProbeInterval is the time between two probes of a provider.
	ProbeInterval = 5 * time.Second
	// StaleAfter is how long a probe may run before its line turns into
	// a stale Failure.
	StaleAfter = 15 * time.Second
	// firstRoundWait bounds how long start waits for the first answers,
	// so that `apiary status` right after start shows real states.
	firstRoundWait = time.Second
	// settlePeriod and settleInterval: for settlePeriod after start, a
	// provider that answers other than Ok is probed again after
	// settleInterval, so that the line of a subsystem still connecting at
	// start turns Ok within a second of it, not at the next round.
	settlePeriod   = 30 * time.Second
	settleInterval = time.Second
)

// Collector keeps the latest status of every provider.
type Collector interface {
	// Status returns every entry in a stable order and the overall state.
	Status() models.Status
}

type collectorParams struct {
	cell.In

	Lifecycle cell.Lifecycle
	Logger    *slog.Logger
	Jobs      job.Group
	Modules   cell.ModuleLister
	Refresher *refresher
	Providers []Provider `group:"status-providers"`
}

type collector struct {
	log       *slog.Logger
	lifecycle cell.Lifecycle
	jobs      job.Group
	refresher *refresher
	entries   []*entry

	ctx    context.Context // of the probes; cancelled at stop
	cancel context.CancelFunc

	mu        sync.Mutex
	stopped   bool
	probes    sync.WaitGroup
	pending   int           // entries that have not answered yet
	firstDone chan struct{} // closed when pending reaches 0
	settle    time.Time     // end of the settle period (settlePeriod)
}

var (
	_ Collector          = (*collector)(nil)
	_ cell.HookInterface = (*collector)(nil)
)

func newCollector(p collectorParams) (Collector, error) {
	// A ProviderOut left empty adds no line (a provider whose subsystem
	// is not in this hive, such as the API line without an API server).
	providers := slices.DeleteFunc(slices.Clone(p.Providers), func(pr Provider) bool { return pr.Name == "" && pr.Probe == nil })
	entries := orderEntries(providers, p.Modules.Modules())
	if err := validateProviders(entries); err != nil {
		return nil, err
	}
	c := &collector{
		log:       p.Logger,
		lifecycle: p.Lifecycle,
		jobs:      p.Jobs,
		refresher: p.Refresher,
		entries:   entries,
		firstDone: make(chan struct{}),
	}
	c.pending = len(c.entries)
	if c.pending == 0 {
		close(c.firstDone)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	p.Lifecycle.Append(c)
	return c, nil
}

// orderEntries sorts providers by the declaration order of their modules
// (unknown modules last), then by name.
func orderEntries(providers []Provider, modules []cell.ModuleInfo) []*entry {
	index := map[string]int{}
	for i, m := range modules {
		index[m.ID.String()] = i
	}
	rank := func(p Provider) int {
		if i, ok := index[p.Module.String()]; ok {
			return i
		}
		return len(modules)
	}
	sorted := slices.Clone(providers)
	slices.SortStableFunc(sorted, func(a, b Provider) int {
		if d := rank(a) - rank(b); d != 0 {
			return d
		}
		return strings.Compare(a.Name, b.Name)
	})
	out := make([]*entry, len(sorted))
	for i, p := range sorted {
		out[i] = &entry{Provider: p}
	}
	return out
}

// Start defers probing to a hook appended now: a hook appended while the
// hive starts runs after all hooks appended before it, so the first
// probes see the whole hive started, not just the cells before this one.
func (c *collector) Start(cell.HookContext) error {
	c.lifecycle.Append(cell.Hook{OnStart: c.startProbing})
	return nil
}

// startProbing adds the probe timer (which probes at once) and waits
// briefly for the first answers.
func (c *collector) startProbing(ctx cell.HookContext) error {
	c.mu.Lock()
	c.settle = time.Now().Add(settlePeriod)
	c.mu.Unlock()
	c.jobs.Add(job.Timer("probe-status", c.probeAll, ProbeInterval))
	c.refresher.start(c.jobs, c.probeAll)
	wait := time.NewTimer(firstRoundWait)
	defer wait.Stop()
	select {
	case <-c.firstDone:
	case <-wait.C:
		c.log.Info("Status probes still pending after start", "wait", firstRoundWait)
	case <-ctx.Done():
	}
	return nil
}

// Stop cancels the running probes and waits for them within ctx.
func (c *collector) Stop(ctx cell.HookContext) error {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.cancel()
	done := make(chan struct{})
	go func() {
		c.probes.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for status probes %s: %w", c.running(), context.Cause(ctx))
	}
}

// running names the providers whose probe is in flight.
func (c *collector) running() string {
	var names []string
	for _, e := range c.entries {
		e.mu.Lock()
		if e.inFlight {
			names = append(names, fmt.Sprintf("%q", e.Name))
		}
		e.mu.Unlock()
	}
	return strings.Join(names, ", ")
}

// probeAll starts a probe of every provider that has none in flight. It
// does not wait for them.
func (c *collector) probeAll(context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return nil
	}
	for _, e := range c.entries {
		c.startProbeLocked(e)
	}
	return nil
}

// startProbeLocked starts a probe of e unless one is in flight; c.mu is
// held and the collector is not stopped.
func (c *collector) startProbeLocked(e *entry) {
	if gen, ok := e.begin(time.Now()); ok {
		c.probes.Add(1)
		go c.probe(e, gen)
	}
}

// reprobeWhileSettling probes e again after settleInterval when it
// answered other than Ok during the settle period.
func (c *collector) reprobeWhileSettling(e *entry, state State) {
	c.mu.Lock()
	settling := state != Ok && time.Now().Before(c.settle)
	c.mu.Unlock()
	if !settling {
		return
	}
	time.AfterFunc(settleInterval, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !c.stopped {
			c.startProbeLocked(e)
		}
	})
}

// probe runs one probe of e, marking it stale when it takes too long.
func (c *collector) probe(e *entry, gen int) {
	defer c.probes.Done()
	stale := time.AfterFunc(StaleAfter, func() {
		if e.markStale(gen, time.Now()) {
			c.log.Warn("Status probe is stale", "provider", e.Name, "after", StaleAfter)
		}
	})
	report := runProbe(c.ctx, e.Probe)
	stale.Stop()
	if c.ctx.Err() != nil {
		e.abort()
		return
	}
	prev, first := e.finish(report, time.Now())
	if first {
		c.answered()
	}
	if !first && prev != report.State {
		log := c.log.Info
		if report.State == Warning || report.State == Failure {
			log = c.log.Warn
		}
		log("Status changed", "provider", e.Name, "from", prev, "to", report.State, "message", report.Message)
	}
	c.reprobeWhileSettling(e, report.State)
}

// answered counts down the entries waiting for their first answer.
func (c *collector) answered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending--
	if c.pending == 0 {
		close(c.firstDone)
	}
}

// runProbe calls a probe, turning a panic into a Failure report.
func runProbe(ctx context.Context, probe ProbeFunc) (r Report) {
	defer func() {
		if v := recover(); v != nil {
			r = Report{State: Failure, Message: fmt.Sprintf("probe panicked: %v", v)}
		}
	}()
	r = probe(ctx)
	if r.State == "" {
		r.State = Failure
		r.Details = append(r.Details, "the probe reported no state")
	}
	return r
}

// Status returns every entry and the overall state.
func (c *collector) Status() models.Status {
	now := time.Now()
	out := models.Status{State: Ok, Entries: make([]models.StatusEntry, 0, len(c.entries))}
	for _, e := range c.entries {
		v := e.view(now)
		if e.Live && !v.Stale {
			r := e.Probe(context.Background())
			at := now
			v.State, v.Message, v.Details, v.LastProbe, v.ProbeDuration = r.State, r.Message, slices.Clone(r.Details), &at, 0
		}
		out.State = models.Worse(out.State, v.State)
		out.Entries = append(out.Entries, v)
	}
	return out
}
