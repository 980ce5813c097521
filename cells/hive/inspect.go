package hive

import (
	"time"

	"github.com/apiary-net/apiary/cells/cell"
)

var (
	_ cell.ModuleLister = (*Hive)(nil)
	_ cell.HookLister   = (*Hive)(nil)
	_ cell.PhaseTimer   = (*Hive)(nil)
)

// Modules returns the hive's modules in declaration order.
func (h *Hive) Modules() []cell.ModuleInfo { return h.scope.Root().Modules() }

// Hooks returns the lifecycle hooks in start order, with durations.
func (h *Hive) Hooks() []cell.HookRecord { return h.lifecycle.Hooks() }

// Timings returns how long populate, start and stop took.
func (h *Hive) Timings() cell.Timings {
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
