package monitorcell

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy/identity"
)

// Cell reads the datapath's events and serves GET /v1/monitor. It needs
// the identity cache (identitycell) and the BPF loader (loadercell);
// in an agent without the loader (another datapath) GET /v1/monitor
// answers 503 ErrNoDatapath.
var Cell = cell.Module("monitor", "Datapath monitor: drop and policy-verdict events for apiary monitor",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newMonitor),
	cell.Provide(newMonitorHandler, newMetricsOut, newDatapathMetricsOut, newSubscriber),
	cell.Invoke(endStreamsBeforeServer),
)

// endStreamsBeforeServer ends the monitor's streams when the agent
// stops, before the REST server waits for its requests to finish: the
// server is constructed after the monitor (it needs the handler), so its
// stop hook runs before the monitor's; this hook, appended after the
// server's, runs before it.
func endStreamsBeforeServer(lc cell.Lifecycle, _ api.Server, svc *service) {
	lc.Append(cell.Hook{OnStop: func(cell.HookContext) error {
		svc.m.Stop()
		return nil
	}})
}

// newSubscriber gives other cells (hubble) subscriptions to the one
// reader of the events ring buffer.
func newSubscriber(svc *service) monitor.Subscriber { return svc.m }

type monitorParams struct {
	cell.In

	Config     Config
	Lifecycle  cell.Lifecycle
	Log        *slog.Logger
	Loader     *loader.Loader `optional:"true"`
	Identities identity.Allocator
}

// ErrNoDatapath is the answer to GET /v1/monitor (503) in an agent
// without the BPF loader.
var ErrNoDatapath = errors.New("this agent has no BPF datapath (no bpf-loader cell): there are no datapath events to monitor")

// service is the monitor, or why there is none.
type service struct {
	m   *monitor.Monitor
	err error
}

// newMonitor returns the monitor, fed between start and stop by a
// goroutine reading the events ring buffer.
func newMonitor(p monitorParams) *service {
	m := monitor.New()
	if p.Loader == nil {
		return &service{m: m, err: ErrNoDatapath}
	}
	var (
		rd  *eventsmap.Reader
		cfg *configmap.Map
		wg  sync.WaitGroup
	)
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			var err error
			if cfg, err = configmap.Open(p.Log, p.Loader.Root()); err != nil {
				return fmt.Errorf("open datapath config: %w", err)
			}
			// Flags left set by an agent that died with clients attached.
			allFlags := uint32(configmap.FlagVerdictEvents | configmap.FlagTraceEvents | configmap.FlagTraceAll)
			if err := cfg.SetFlag(allFlags, false); err != nil {
				cfg.Close()
				return err
			}
			m.OnVerdictSubscribers(func(listening bool) {
				if err := cfg.SetFlag(configmap.FlagVerdictEvents, listening); err != nil {
					p.Log.Warn("Cannot switch the datapath's policy-verdict events", "on", listening, "error", err)
				}
			})
			traceFlags := p.Config.traceFlags()
			m.OnTraceSubscribers(func(listening bool) {
				if err := cfg.SetFlag(traceFlags, listening); err != nil {
					p.Log.Warn("Cannot switch the datapath's trace events", "on", listening, "error", err)
				}
			})
			if rd, err = eventsmap.Open(p.Log, p.Loader.Root()); err != nil {
				cfg.Close()
				return fmt.Errorf("open datapath events: %w", err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.Run(p.Log, rd, p.Identities, nil)
			}()
			return nil
		},
		OnStop: func(cell.HookContext) error {
			err := rd.Close()
			wg.Wait()
			m.Stop() // clears the verdict and trace flags when clients were attached
			err = errors.Join(err, cfg.Close())
			if err != nil {
				return fmt.Errorf("close datapath events: %w", err)
			}
			return nil
		},
	})
	return &service{m: m}
}
