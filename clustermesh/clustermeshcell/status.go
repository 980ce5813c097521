package clustermeshcell

import (
	"context"
	"fmt"
	"net/http"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh"
)

// newStatusProvider adds the "ClusterMesh" line:
//
//	ClusterMesh:   1/1 clusters ready, 0 global-services
//	  cluster2: ready, 23 nodes, 2618 identities, 0 services, 0 failures (last: never)
//	  └  etcd: 1/1 connected, ...
//
// Until the config directory was read once it is a Warning "Waiting for
// initial read of <dir>".
func newStatusProvider(id cell.FullModuleID, cm *clustermesh.ClusterMesh) status.ProviderOut {
	return status.NewProviderOut(id, "ClusterMesh", func(context.Context) status.Report {
		if !cm.Enabled() {
			return status.Report{State: status.Disabled, Message: "disabled (--clustermesh-config is empty)"}
		}
		if !cm.FirstScanDone() {
			// Not Ok: "0/0 clusters ready" would be a lie, and the
			// collector probes a line that is not Ok again within a
			// second while the agent settles.
			return status.Report{State: status.Warning,
				Message: "Waiting for initial read of " + cm.Status().ConfigDir}
		}
		return StatusReport(cm.Status())
	})
}

// StatusReport renders the mesh as a status line; not-ready clusters
// make it a Warning that says why.
func StatusReport(m models.ClusterMesh) status.Report {
	ready := 0
	r := status.Report{State: status.Ok}
	for _, c := range m.Clusters {
		if c.Ready {
			ready++
		} else {
			r.State = status.Warning
		}
		r.Details = append(r.Details, ClusterLine(c))
		if c.Etcd != "" {
			r.Details = append(r.Details, "└  "+c.Etcd)
		}
	}
	r.Message = fmt.Sprintf("%d/%d clusters ready, %d global-services", ready, len(m.Clusters), m.GlobalServices)
	for _, inv := range m.Invalid {
		r.State = status.Warning
		r.Details = append(r.Details, fmt.Sprintf("%s: refused: %s", inv.File, inv.Error))
	}
	if len(m.Invalid) > 0 {
		r.Message += fmt.Sprintf(", %d config files refused", len(m.Invalid))
	}
	return r
}

// ClusterLine is one cluster's line:
// "cluster2: ready, 23 nodes, 2618 identities, 0 services, 0 failures (last: never)".
func ClusterLine(c models.RemoteCluster) string {
	state := "ready"
	if !c.Ready {
		state = "not ready: " + c.Status
	}
	last := "never"
	if c.LastFailure != nil {
		last = c.LastFailure.Format("2006-01-02T15:04:05Z07:00") + ": " + c.LastError
	}
	skipped := 0
	for _, p := range c.Prefixes {
		skipped += p.Malformed + p.Refused
	}
	line := fmt.Sprintf("%s: %s, %d nodes, %d identities, %d services, %d failures (last: %s)",
		c.Name, state, c.Nodes, c.Identities, c.Services, c.Failures, last)
	if skipped > 0 {
		line += fmt.Sprintf(", %d entries skipped", skipped)
	}
	return line
}

// newStatusHandler serves GET /v1/cluster/mesh (`apiary clustermesh status`).
func newStatusHandler(cm *clustermesh.ClusterMesh) api.HandlerOut {
	return api.NewHandlerOut(http.MethodGet, "/v1/cluster/mesh", func(w http.ResponseWriter, _ *http.Request) {
		api.WriteJSON(w, http.StatusOK, cm.Status())
	})
}
