package api

import (
	"net/http"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/controller"
	"github.com/apiary-net/apiary/cells/version"
)

// builtins serves the endpoints every agent has.
type builtins struct {
	health  cell.HealthReporter
	modules cell.ModuleLister
	hooks   cell.HookLister
	timings cell.PhaseTimer
	ctrls   controller.Registry
}

func (b *builtins) handlers() []Handler {
	return []Handler{
		{Method: http.MethodGet, Path: "/v1/healthz", Handler: http.HandlerFunc(b.healthz)},
		{Method: http.MethodGet, Path: "/v1/hive", Handler: http.HandlerFunc(b.hive)},
		{Method: http.MethodGet, Path: "/v1/controllers", Handler: http.HandlerFunc(b.controllers)},
		{Method: http.MethodGet, Path: "/v1/version", Handler: http.HandlerFunc(b.version)},
	}
}

// healthz answers 200 when no health scope is degraded, else 503 with the
// ids of the degraded scopes.
func (b *builtins) healthz(w http.ResponseWriter, _ *http.Request) {
	var degraded []string
	for _, st := range b.health.All() {
		if st.Level == cell.LevelDegraded {
			degraded = append(degraded, st.ID)
		}
	}
	if len(degraded) > 0 {
		WriteJSON(w, http.StatusServiceUnavailable, models.Healthz{Status: models.HealthzDegraded, Degraded: degraded})
		return
	}
	WriteJSON(w, http.StatusOK, models.Healthz{Status: models.HealthzOK})
}

func (b *builtins) hive(w http.ResponseWriter, _ *http.Request) {
	tree := hiveTree(b.modules.Modules(), b.health.Tree())
	for _, h := range b.hooks.Hooks() {
		tree.Hooks = append(tree.Hooks, models.Hook{
			Module: h.Module.String(), Start: h.StartName, Stop: h.StopName,
			StartDuration: models.Duration(h.StartDuration),
		})
	}
	t := b.timings.Timings()
	tree.Timings = models.Timings{Populate: models.Duration(t.Populate), Start: models.Duration(t.Start)}
	WriteJSON(w, http.StatusOK, tree)
}

func (b *builtins) controllers(w http.ResponseWriter, _ *http.Request) {
	var ctrls []models.ControllerStatus
	if b.ctrls != nil {
		ctrls = b.ctrls.Controllers()
	}
	if ctrls == nil {
		ctrls = []models.ControllerStatus{}
	}
	WriteJSON(w, http.StatusOK, ctrls)
}

func (b *builtins) version(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusOK, version.Get())
}
