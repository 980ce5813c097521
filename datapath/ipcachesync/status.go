package ipcachesync

import (
	"context"
	"fmt"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// newStatusProvider adds the "IPCache map" line to `apiary status`:
// "reconciled, 12 upserts, 3 deletes", "waiting for the initial sync",
// or a Warning with the last write's error (the module stays healthy).
func newStatusProvider(id cell.FullModuleID, s *syncer, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "IPCache map", func(context.Context) status.Report {
		r := report(s.Stats())
		status.ReportHealth(health, r, s.Stats().LastError)
		return r
	})
}

func report(st Stats) status.Report {
	msg := "waiting for the initial sync"
	if st.Reconciled {
		msg = fmt.Sprintf("reconciled (%d added, %d removed)", st.ReconcileAdded, st.ReconcileRemoved)
	}
	msg += fmt.Sprintf(", %d upserts, %d deletes", st.Upserts, st.Deletes)
	if st.Pending > 0 {
		msg += fmt.Sprintf(", %d pending", st.Pending)
	}
	if st.LastError != nil {
		return status.Report{State: status.Warning, Message: msg + ", last write failed",
			Details: []string{st.LastError.Error()}}
	}
	return status.Report{State: status.Ok, Message: msg}
}
