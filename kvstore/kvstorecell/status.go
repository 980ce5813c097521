package kvstorecell

import (
	"context"
	"errors"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore"
)

// newStatusProvider adds the KVStore line to `apiary status` and keeps
// the module's health in step with it.
func newStatusProvider(id cell.FullModuleID, c kvstore.Client, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "KVStore", func(context.Context) status.Report {
		st := c.Status()
		switch st.State {
		case kvstore.StateDisabled:
			return status.Report{State: status.Disabled, Message: st.Message}
		case kvstore.StateOK:
			health.OK(st.Message)
			return status.Report{State: status.Ok, Message: st.Message}
		case kvstore.StateConnecting:
			// Not usable yet (the agent is not ready), but nothing has
			// failed: the line says the client is connecting.
			health.Degraded("kvstore connecting", errors.New(st.Message))
			return status.Report{State: status.Warning, Message: st.Message}
		default:
			health.Degraded("kvstore not usable", errors.New(st.Message))
			return status.Report{State: status.Failure, Message: st.Message}
		}
	})
}
