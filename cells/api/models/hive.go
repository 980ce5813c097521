package models

import "time"

// Healthz is the body of GET /v1/healthz.
type Healthz struct {
	// Status is "ok", or "degraded" when any health scope is degraded.
	Status string `json:"status"`
	// Degraded lists the ids of the degraded health scopes.
	Degraded []string `json:"degraded,omitempty"`
}

// The values of Healthz.Status.
const (
	HealthzOK       = "ok"
	HealthzDegraded = "degraded"
)

// Hive is the body of GET /v1/hive: the module tree with its health.
type Hive struct {
	// Level is the worst level of the whole health tree.
	Level Level `json:"level"`
	// Modules are the top-level modules in declaration order.
	Modules []*Module `json:"modules"`
	// Scopes are health scopes that belong to no module.
	Scopes []*HealthScope `json:"scopes,omitempty"`
	// Hooks are the lifecycle hooks in start order, with their durations.
	Hooks []Hook `json:"hooks,omitempty"`
	// Timings are the durations of populate and start.
	Timings Timings `json:"timings"`
}

// Module is one module of the hive with its health.
type Module struct {
	// ID is the full, dotted module id ("agent.api-server").
	ID string `json:"id"`
	// Name is the module's own id ("api-server").
	Name string `json:"name"`
	// Title says what the module does.
	Title string `json:"title"`
	// Level is the worst level of the module and everything below it.
	Level Level `json:"level"`
	// Message is what the module reported on its own scope, if anything.
	Message string `json:"message,omitempty"`
	// Error is the error of the module's own report, if any.
	Error string `json:"error,omitempty"`
	// Since is when the module's own report last changed level.
	Since *time.Time `json:"since,omitempty"`
	// Scopes are the health scopes below the module that are not modules
	// (jobs, controllers, sub-components).
	Scopes []*HealthScope `json:"scopes,omitempty"`
	// Modules are the nested modules.
	Modules []*Module `json:"modules,omitempty"`
}

// HealthScope is one health scope with its aggregated level.
type HealthScope struct {
	// ID is the full, dotted scope id.
	ID string `json:"id"`
	// Name is the last element of the id.
	Name string `json:"name"`
	// Level is the worst level of the scope and its children.
	Level Level `json:"level"`
	// Message is the scope's last report.
	Message string `json:"message,omitempty"`
	// Error is the error of a degraded report.
	Error string `json:"error,omitempty"`
	// Since is when the scope last changed level (nil if it never
	// reported itself, only its children did).
	Since *time.Time `json:"since,omitempty"`
	// Updated is when the scope last reported.
	Updated *time.Time `json:"updated,omitempty"`
	// Children are the scopes below this one.
	Children []*HealthScope `json:"children,omitempty"`
}

// Hook is one lifecycle hook of the running hive, in start order.
type Hook struct {
	// Module is the full id of the module that appended the hook.
	Module string `json:"module,omitempty"`
	// Start and Stop name the hook's functions (empty when it has none).
	Start string `json:"start,omitempty"`
	Stop  string `json:"stop,omitempty"`
	// StartDuration is how long the start function took.
	StartDuration Duration `json:"start-duration"`
}

// Timings are the durations of the hive's phases.
type Timings struct {
	Populate Duration `json:"populate"`
	Start    Duration `json:"start"`
}
