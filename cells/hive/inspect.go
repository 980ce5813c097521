package hive

import (
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

// Timings are the durations of the hive's phases.
type Timings struct {
	Populate time.Duration
	Start    time.Duration
	Stop     time.Duration
}

// Inspector lets cells look at the hive they run in: the module tree, the
// hooks with their durations, and the phase timings.
type Inspector interface {
	Modules() []cell.ModuleInfo
	Hooks() []cell.HookRecord
	Timings() Timings
	UnknownConfigFiles() []string
}

var _ Inspector = (*Hive)(nil)

// Modules returns the hive's modules in declaration order.
func (h *Hive) Modules() []cell.ModuleInfo { return h.scope.Root().Modules() }

// Hooks returns the lifecycle hooks in start order, with durations.
func (h *Hive) Hooks() []cell.HookRecord { return h.lifecycle.Hooks() }

// Timings returns how long populate, start and stop took.
func (h *Hive) Timings() Timings {
	h.timingsMu.Lock()
	defer h.timingsMu.Unlock()
	return h.timings
}

func (h *Hive) setTiming(field *time.Duration, d time.Duration) {
	h.timingsMu.Lock()
	*field = d
	h.timingsMu.Unlock()
}

// UnknownConfigFiles returns the --config-dir files that match no flag.
func (h *Hive) UnknownConfigFiles() []string { return h.unknownFiles }
