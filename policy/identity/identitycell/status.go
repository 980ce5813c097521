package identitycell

import (
	"context"
	"errors"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
)

// newStatusProvider adds the "Identities" line to `apiary status` and
// keeps the module's health in step with it: degraded only while global
// identities cannot be used. Skipped kvstore entries make the line a
// Warning but leave the module healthy: one bad key, written by anyone,
// must not fail the agent's health.
func newStatusProvider(id cell.FullModuleID, m *identitycache.Manager, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "Identities", func(context.Context) status.Report {
		r := m.StatusReport()
		if m.Usable() {
			health.OK(r.Message)
		} else {
			health.Degraded(r.Message, errors.New(r.Message))
		}
		return r
	})
}
