package svcmanagercell

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/healthserver"
)

// maxWarnings bounds the services' warnings listed in the details.
const maxWarnings = 10

// newStatusProvider adds the "Services" line:
//
//	Services:   12 services (2 global), 30 frontends, 41 backends (2 remote), reconciled (3 added, 1 removed), 20 upserts, 4 deletes
//
// A Warning when a write failed (with its error and time), the state
// file was refused, frontends conflict or a service had fields ignored.
func newStatusProvider(id cell.FullModuleID, m *svcmanager.Manager, f *fileSource, w *waiting, hs *healthserver.Server, proxy *healthserver.Proxy,
	health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "Services", func(context.Context) status.Report {
		st := m.Stats()
		r := report(st, m.HasWriter())
		if hs != nil {
			if n := hs.Ports(); n > 0 {
				r.Message += fmt.Sprintf(", %d health-check NodePorts", n)
			}
			if err := hs.Failed(); err != nil {
				r.State = status.Warning
				r.Message += ", a health-check NodePort failed"
				r.Details = append(r.Details, strings.Split(err.Error(), "\n")...)
			}
		}
		proxyReport(&r, proxy)
		if what := w.get(); what != "" && !st.Reconciled {
			r.Details = append(r.Details, "waiting for "+what)
		}
		if f.enabled() {
			n, err := f.state()
			r.Details = append(r.Details, fmt.Sprintf("--lb-state-file %s: %d services", f.path, n))
			if err != nil {
				r.State = status.Warning
				r.Message += ", --lb-state-file refused"
				r.Details = append(r.Details, "└  "+err.Error())
			}
		}
		status.ReportHealth(health, r, st.LastError)
		return r
	})
}

func report(st svcmanager.Stats, writer bool) status.Report {
	r := status.Report{State: status.Ok}
	r.Message = fmt.Sprintf("%d services (%d global), %d frontends, %d backends (%d remote)",
		st.Services, st.Global, st.Frontends, st.Backends, st.RemoteBackends)
	switch {
	case !writer:
		r.Message += ", not written: no load-balancing datapath in this agent"
	case !st.Reconciled:
		r.Message += ", waiting for the initial sync"
	default:
		r.Message += fmt.Sprintf(", reconciled (%d added, %d removed), %d upserts, %d deletes",
			st.ReconcileAdded, st.ReconcileRemoved, st.Upserts, st.Deletes)
	}
	if st.Pending > 0 {
		r.Message += fmt.Sprintf(", %d pending", st.Pending)
	}
	if st.LastError != nil {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %d failed writes", st.Failures)
		r.Details = append(r.Details, fmt.Sprintf("last failure %s: %v",
			st.LastErrorTime.Format("2006-01-02T15:04:05Z07:00"), st.LastError))
	}
	if st.Conflicts > 0 {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %d frontends wanted by two services", st.Conflicts)
	}
	if len(st.Warnings) > 0 {
		r.State = status.Warning
		r.Message += fmt.Sprintf(", %d services with ignored fields", len(st.Warnings))
		for i, k := range slices.Sorted(maps.Keys(st.Warnings)) {
			if i == maxWarnings {
				r.Details = append(r.Details, fmt.Sprintf("... and %d more", len(st.Warnings)-maxWarnings))
				break
			}
			r.Details = append(r.Details, fmt.Sprintf("%s: %s", k, st.Warnings[k][0]))
		}
	}
	return r
}
