package status

import (
	"errors"

	"github.com/apiary-net/apiary/cells/cell"
)

// ReportHealth keeps a module's health in step with its status line: a
// Failure degrades the module (with err, or the message when err is
// nil), anything else is OK. A Warning (a skipped policy file, an
// endpoint whose policy does not fit its map) is shown on the line
// itself; degrading the module for it would make the Hive line, and so
// Overall and /v1/healthz, a Failure for a condition that leaves the
// agent working, and print the same message twice.
func ReportHealth(h cell.Health, r Report, err error) {
	if r.State != Failure {
		h.OK(r.Message)
		return
	}
	if err == nil {
		err = errors.New(r.Message)
	}
	h.Degraded(r.Message, err)
}
