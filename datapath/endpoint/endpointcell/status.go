package endpointcell

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/endpoint"
)

// newStatusProvider adds the "Endpoints" line to `apiary status`: "3
// endpoints: 2 ready, 1 not-ready"; a Warning (the module stays healthy)
// while some endpoint failed, each named in the details with its error.
func newStatusProvider(id cell.FullModuleID, m *endpoint.Manager, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "Endpoints", func(context.Context) status.Report {
		r := report(m.Endpoints())
		status.ReportHealth(health, r, errors.New(strings.Join(r.Details, "; ")))
		return r
	})
}

// stateOrder is the order of the states in the status line.
var stateOrder = []endpoint.State{endpoint.StateReady, endpoint.StateRegenerating, endpoint.StateWaitingForIdentity,
	endpoint.StateNotReady, endpoint.StateDisconnecting}

func report(eps []endpoint.Endpoint) status.Report {
	counts := map[endpoint.State]int{}
	var details []string
	for _, e := range eps {
		counts[e.State]++
		if e.Error != "" {
			details = append(details, fmt.Sprintf("endpoint %d (%s): %s", e.ID, e.State, e.Error))
		}
	}
	msg := fmt.Sprintf("%d endpoints", len(eps))
	var parts []string
	for _, s := range stateOrder {
		if counts[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[s], s))
		}
	}
	if len(parts) > 0 {
		msg += ": " + strings.Join(parts, ", ")
	}
	state := status.Ok
	if len(details) > 0 {
		state = status.Warning
	}
	return status.Report{State: state, Message: msg, Details: details}
}
