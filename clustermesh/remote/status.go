package remote

import (
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/cells/api/models"
)

// Status returns the state of the connection, for the API and the status
// line.
func (c *Cluster) Status() models.RemoteCluster {
	c.mu.Lock()
	st, conn, w := c.state, c.conn, c.watchers
	out := models.RemoteCluster{
		Name: c.p.Name, ConfigFile: c.configFile, Connected: st.connected, Ready: w != nil && w.allSynced() && conn != nil,
		Status: st.status, Failures: st.failures, LastError: st.lastError,
		Config: models.RemoteClusterConfig{Required: true, Found: st.config.found},
	}
	c.mu.Unlock()
	if st.config.found {
		cfg := st.config.cfg
		out.Config.ClusterID = cfg.ID
		out.Config.SyncedCanaries = cfg.Capabilities.SyncedCanaries
		out.Config.MaxConnectedClusters = cfg.MaxConnected()
		out.Config.ServiceExportsEnabled = cfg.Capabilities.ServiceExportsEnabled
		out.Config.Cached = cfg.Capabilities.Cached
	}
	if !st.lastFailure.IsZero() {
		t := st.lastFailure
		out.LastFailure = &t
	}
	if conn != nil {
		out.Etcd = conn.backend.Status().Message
	}
	if w != nil {
		out.Prefixes = w.prefixes(c.p.Name, out.Config.SyncedCanaries)
		out.Nodes = w.nodes.Store().NumEntries()
		out.Endpoints = w.ipcache.Store().NumEntries()
		out.Identities = w.identities.Store().NumEntries()
		out.Services = w.services.Store().NumEntries()
		if conn != nil && !out.Ready {
			if canary := w.waitingFor(); canary != "" && out.Config.SyncedCanaries {
				out.Status = "waiting for sync canary of " + canary
			}
		}
	}
	if others := c.p.Claims.Conflicts(c.p.Name); len(others) > 0 && conn != nil {
		out.Status += fmt.Sprintf(" (cluster id %d is also claimed by %s, which was refused)", out.Config.ClusterID, strings.Join(others, ", "))
	}
	return out
}
