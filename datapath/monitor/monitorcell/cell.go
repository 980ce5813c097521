package monitorcell

import (
	"fmt"
	"log/slog"
	"sync"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/events"
	"github.com/apiary-net/apiary/datapath/monitor"
	"github.com/apiary-net/apiary/policy/identity"
)

// Cell reads the datapath's events and serves GET /v1/monitor. It needs
// the BPF loader (loadercell) and the identity cache (identitycell).
var Cell = cell.Module("monitor", "Datapath monitor: drop and policy-verdict events for apiary monitor",
	cell.ProvidePrivate(newMonitor),
	cell.Provide(newMonitorHandler),
	cell.Invoke(endStreamsBeforeServer),
)

// endStreamsBeforeServer ends the monitor's streams when the agent
// stops, before the REST server waits for its requests to finish: the
// server is constructed after the monitor (it needs the handler), so its
// stop hook runs before the monitor's; this hook, appended after the
// server's, runs before it.
func endStreamsBeforeServer(lc cell.Lifecycle, _ api.Server, m *monitor.Monitor) {
	lc.Append(cell.Hook{OnStop: func(cell.HookContext) error {
		m.Stop()
		return nil
	}})
}

type monitorParams struct {
	cell.In

	Lifecycle  cell.Lifecycle
	Log        *slog.Logger
	Loader     *loader.Loader
	Identities identity.Allocator
}

// newMonitor returns the monitor, fed between start and stop by a
// goroutine reading the events ring buffer.
func newMonitor(p monitorParams) *monitor.Monitor {
	m := monitor.New()
	var (
		rd *events.Reader
		wg sync.WaitGroup
	)
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			var err error
			if rd, err = events.Open(p.Log, p.Loader.Root()); err != nil {
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
			m.Stop()
			if err != nil {
				return fmt.Errorf("close datapath events: %w", err)
			}
			return nil
		},
	})
	return m
}
