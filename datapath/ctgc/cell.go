package ctgc

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
)

// Cell runs the conntrack GC every --conntrack-gc-interval on the maps
// pinned under the loader's root, and registers its metrics. With the
// endpoint manager in the hive, its first run waits for the restore and
// deletes the entries of endpoints that were not restored.
var Cell = cell.Module("conntrack-gc", "Conntrack garbage collector",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(NewMetrics),
	cell.Provide(func(m *Metrics) metrics.GroupOut { return metrics.NewGroupOut(m) }),
	cell.Invoke(startGC),
)

// Config is the collector's configuration.
type Config struct {
	// ConntrackGCInterval is the time between two runs.
	ConntrackGCInterval time.Duration
}

// DefaultConfig runs the GC every minute.
var DefaultConfig = Config{ConntrackGCInterval: time.Minute}

// Flags registers --conntrack-gc-interval.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Duration("conntrack-gc-interval", def.ConntrackGCInterval,
		"Time between two runs of the conntrack garbage collector (expired entries, and after a start those of endpoints not restored)")
}

// Validate checks the interval.
func (c *Config) Validate() error {
	if c.ConntrackGCInterval <= 0 {
		return fmt.Errorf("--conntrack-gc-interval must be positive, not %s", c.ConntrackGCInterval)
	}
	return nil
}

type gcParams struct {
	cell.In

	Config    Config
	Loader    *loader.Loader
	Endpoints *endpoint.Manager `optional:"true"`
	K8sCaches k8s.CacheSync     `optional:"true"`
	Metrics   *Metrics
	Lifecycle cell.Lifecycle
	Jobs      job.Group
	Log       *slog.Logger
}

// startGC opens the conntrack maps at start (after the loader created
// them) and adds the timer job; the maps are closed at stop.
func startGC(p gcParams) {
	var (
		mu   sync.Mutex
		maps *ctmap.Maps
	)
	var eps Endpoints
	if p.Endpoints != nil {
		eps = p.Endpoints
	}
	var gc *GC
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			m, err := ctmap.Open(p.Log, p.Loader.Root())
			if err != nil {
				return fmt.Errorf("open conntrack maps: %w", err)
			}
			mu.Lock()
			maps, gc = m, New(m, eps, p.Metrics, p.Log)
			mu.Unlock()
			return nil
		},
		OnStop: func(cell.HookContext) error {
			mu.Lock()
			defer mu.Unlock()
			if maps == nil {
				return nil
			}
			err := maps.Close()
			maps, gc = nil, nil
			return err
		},
	})
	p.Jobs.Add(job.Timer("conntrack-gc", func(ctx context.Context) error {
		if p.K8sCaches != nil {
			// No entry is collected for a policy computed from a
			// half-filled cache.
			if err := p.K8sCaches.WaitForCacheSync(ctx); err != nil {
				return err
			}
		}
		if eps != nil {
			// Waited for outside the lock, so a stop never waits on it.
			if err := eps.WaitForLocalRestore(ctx); err != nil {
				return err
			}
		}
		// Held during the run: the stop hook closes the maps after it.
		mu.Lock()
		defer mu.Unlock()
		if gc == nil {
			return nil
		}
		_, err := gc.Run(ctx)
		return err
	}, p.Config.ConntrackGCInterval))
}
