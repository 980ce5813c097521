package clustermeshcell

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/clustermesh"
)

// meshCollector reports the mesh at scrape time:
// apiary_clustermesh_remote_clusters, and per target_cluster
// apiary_clustermesh_remote_cluster_readiness_status,
// _failures, _last_failure_ts, _nodes and _services, and
// apiary_clustermesh_global_services. Entries skipped per remote
// prefix are in apiary_kvstore_store_skipped_values_total{scope="<cluster>/..."}.
type meshCollector struct {
	cm                                     *clustermesh.ClusterMesh
	clusters, ready, failures, last, nodes *prometheus.Desc
	services, globalServices               *prometheus.Desc
}

func newMetricsOut(cm *clustermesh.ClusterMesh) metrics.GroupOut {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("apiary_clustermesh_"+name, help, labels, nil)
	}
	return metrics.NewGroupOut(&meshCollector{
		cm:             cm,
		clusters:       d("remote_clusters", "Remote clusters configured"),
		ready:          d("remote_cluster_readiness_status", "Whether a remote cluster is ready (1) or not (0)", "target_cluster"),
		failures:       d("remote_cluster_failures", "Failed connection attempts to a remote cluster", "target_cluster"),
		last:           d("remote_cluster_last_failure_ts", "Unix time of the last failure of a remote cluster (0: never)", "target_cluster"),
		nodes:          d("remote_cluster_nodes", "Nodes known from a remote cluster", "target_cluster"),
		services:       d("remote_cluster_services", "Services a remote cluster publishes", "target_cluster"),
		globalServices: d("global_services", "Global services the remote clusters share (namespace/names)"),
	})
}

// Describe sends the descriptions.
func (m *meshCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.clusters, m.ready, m.failures, m.last, m.nodes, m.services, m.globalServices} {
		ch <- d
	}
}

// Collect reads the mesh's status.
func (m *meshCollector) Collect(ch chan<- prometheus.Metric) {
	st := m.cm.Status()
	ch <- prometheus.MustNewConstMetric(m.clusters, prometheus.GaugeValue, float64(len(st.Clusters)))
	ch <- prometheus.MustNewConstMetric(m.globalServices, prometheus.GaugeValue, float64(st.GlobalServices))
	for _, c := range st.Clusters {
		ready, last := 0.0, 0.0
		if c.Ready {
			ready = 1
		}
		if c.LastFailure != nil {
			last = float64(c.LastFailure.Unix())
		}
		ch <- prometheus.MustNewConstMetric(m.ready, prometheus.GaugeValue, ready, c.Name)
		ch <- prometheus.MustNewConstMetric(m.failures, prometheus.CounterValue, float64(c.Failures), c.Name)
		ch <- prometheus.MustNewConstMetric(m.last, prometheus.GaugeValue, last, c.Name)
		ch <- prometheus.MustNewConstMetric(m.nodes, prometheus.GaugeValue, float64(c.Nodes), c.Name)
		ch <- prometheus.MustNewConstMetric(m.services, prometheus.GaugeValue, float64(c.Services), c.Name)
	}
}
