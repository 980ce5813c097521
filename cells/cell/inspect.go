package cell

import "time"

// ModuleLister lists the modules of the hive a cell runs in, in
// declaration order. The hive provides it.
type ModuleLister interface {
	Modules() []ModuleInfo
}

// HookLister lists the lifecycle hooks of the hive in start order, with
// their durations. The hive provides it.
type HookLister interface {
	Hooks() []HookRecord
}

// Timings are the durations of a hive's phases.
type Timings struct {
	Populate time.Duration
	Start    time.Duration
	Stop     time.Duration
}

// PhaseTimer reports how long the hive's phases took. The hive provides
// it.
type PhaseTimer interface {
	Timings() Timings
}
