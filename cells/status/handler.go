package status

import (
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
)

// statusHandler serves GET /v1/status.
type statusHandler struct {
	collector Collector
}

func (h statusHandler) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	api.WriteJSON(w, http.StatusOK, h.collector.Status())
}

func newStatusHandler(c Collector) api.HandlerOut {
	return api.HandlerOut{Handler: api.Handler{Method: http.MethodGet, Path: "/v1/status", Handler: statusHandler{c}}}
}
