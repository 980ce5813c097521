package svcmanagercell

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// servicesCollector reports the service manager at scrape time:
// apiary_services, apiary_services_frontends, apiary_services_backends
// (remote: of remote clusters), apiary_services_writes_total{op} and
// apiary_services_write_failures_total.
type servicesCollector struct {
	m                                     *svcmanager.Manager
	services, frontends, backends, writes *prometheus.Desc
	failures                              *prometheus.Desc
}

func newMetricsOut(m *svcmanager.Manager) metrics.GroupOut {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("apiary_services"+name, help, labels, nil)
	}
	return metrics.NewGroupOut(&servicesCollector{m: m,
		services:  d("", "Services the service manager balances"),
		frontends: d("_frontends", "Load-balancing frontends desired", "type"),
		backends:  d("_backends", "Backends of the desired frontends (a backend of two frontends counts twice)", "remote"),
		writes:    d("_writes_total", "Writes to the load-balancing maps since the initial reconcile", "op"),
		failures:  d("_write_failures_total", "Failed writes to the load-balancing maps, the initial reconcile's included"),
	})
}

// Describe sends the descriptions.
func (c *servicesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.services, c.frontends, c.backends, c.writes, c.failures} {
		ch <- d
	}
}

// Collect reads the manager's counters.
func (c *servicesCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.m.Stats()
	byType := map[string]int{}
	for _, e := range c.m.Frontends() {
		byType[string(e.Type)]++
	}
	ch <- prometheus.MustNewConstMetric(c.services, prometheus.GaugeValue, float64(st.Services))
	for t, n := range byType {
		ch <- prometheus.MustNewConstMetric(c.frontends, prometheus.GaugeValue, float64(n), t)
	}
	ch <- prometheus.MustNewConstMetric(c.backends, prometheus.GaugeValue, float64(st.Backends-st.RemoteBackends), "false")
	ch <- prometheus.MustNewConstMetric(c.backends, prometheus.GaugeValue, float64(st.RemoteBackends), "true")
	ch <- prometheus.MustNewConstMetric(c.writes, prometheus.CounterValue, float64(st.Upserts), "upsert")
	ch <- prometheus.MustNewConstMetric(c.writes, prometheus.CounterValue, float64(st.Deletes), "delete")
	ch <- prometheus.MustNewConstMetric(c.failures, prometheus.CounterValue, float64(st.Failures))
}
