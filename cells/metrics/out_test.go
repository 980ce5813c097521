package metrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/metrics"
)

type someMetrics struct {
	Requests prometheus.Counter
	Latency  *prometheus.HistogramVec
	Unset    *prometheus.GaugeVec
	Name     string
	private  prometheus.Counter
}

func TestNewGroupOut(t *testing.T) {
	m := &someMetrics{
		Requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "requests_total", Help: "r"}),
		Latency:  prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "latency_seconds", Help: "l"}, []string{"op"}),
		private:  prometheus.NewCounter(prometheus.CounterOpts{Name: "private_total", Help: "p"}),
	}
	extra := prometheus.NewGauge(prometheus.GaugeOpts{Name: "extra", Help: "e"})
	out := metrics.NewGroupOut(m, extra)
	if len(out.Collectors) != 3 || out.Collectors[0] != m.Requests || out.Collectors[2] != extra {
		t.Errorf("collectors = %v, want Requests, Latency and the extra gauge", out.Collectors)
	}
}
