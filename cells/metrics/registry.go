package metrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/apiary-net/apiary/cells/cell"
)

// Registry is the agent's Prometheus registry.
type Registry interface {
	prometheus.Registerer
	prometheus.Gatherer
}

// Out registers a collector with the agent's registry: return it from a
// constructor registered with cell.Provide.
type Out struct {
	cell.Out

	Collector prometheus.Collector `group:"metrics"`
}

type registryParams struct {
	cell.In

	Lifecycle  cell.Lifecycle
	Timings    cell.PhaseTimer
	Collectors []prometheus.Collector `group:"metrics"`
}

// newRegistry creates the registry with the Go, process and bootstrap
// collectors and every collector of the metrics group.
func newRegistry(p registryParams) (Registry, error) {
	reg := prometheus.NewRegistry()
	boot := newBootstrapCollector(p.Timings)
	builtin := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		boot,
	}
	for _, c := range append(builtin, p.Collectors...) {
		if c == nil {
			return nil, fmt.Errorf("register metrics collector: nil collector in the metrics group")
		}
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics collector %T: %w", c, err)
		}
	}
	boot.lifecycle = p.Lifecycle
	p.Lifecycle.Append(cell.Hook{OnStart: boot.appendStartedHook})
	return reg, nil
}
