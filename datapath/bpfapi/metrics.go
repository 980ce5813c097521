package bpfapi

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/maps/metricsmap"
)

// newMetricsHandler serves GET /v1/bpf/metrics: the datapath's counters
// by reason and direction (those that counted a packet), sorted by
// reason code, then direction.
func newMetricsHandler(m *maps) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/bpf/metrics", func(w http.ResponseWriter, r *http.Request) {
		if !m.available(w) {
			return
		}
		out, err := m.metrics()
		if err != nil {
			api.WriteError(w, http.StatusInternalServerError, err)
			return
		}
		api.WriteJSON(w, http.StatusOK, models.BPFMetrics{Items: out})
	})
}

func (m *maps) metrics() ([]models.BPFMetric, error) {
	mm, err := metricsmap.Open(m.log, m.root)
	if err != nil {
		return nil, fmt.Errorf("open BPF metrics map: %w", err)
	}
	defer mm.Close()
	ms, err := mm.Read()
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ms, func(a, b metricsmap.Metric) int {
		return cmp.Or(cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Direction, b.Direction))
	})
	out := make([]models.BPFMetric, 0, len(ms))
	for _, x := range ms {
		out = append(out, models.BPFMetric{
			Reason: x.Reason.String(), ReasonCode: uint8(x.Reason), Direction: x.Direction.String(),
			Packets: x.Packets, Bytes: x.Bytes,
		})
	}
	return out, nil
}
