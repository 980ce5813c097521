package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
)

type apiProviderParams struct {
	cell.In

	Module   cell.FullModuleID
	Requests api.Requests `optional:"true"`
}

// newAPIProvider adds the "API" line when the agent serves the REST API:
// its socket and the requests in flight, a Warning naming every request
// running longer than api.SlowRequest (a handler blocked on a file, the
// kernel or a lock shows here and in the log, not as a silent agent).
func newAPIProvider(p apiProviderParams) (ProviderOut, error) {
	if p.Requests == nil {
		return ProviderOut{}, nil
	}
	return NewProviderOut(p.Module, "API", func(context.Context) Report {
		return apiReport(p.Requests.SocketPath(), p.Requests.InFlight(), time.Now())
	}), nil
}

func apiReport(socket string, reqs []api.Request, now time.Time) Report {
	var slow []string
	for _, r := range reqs {
		if d := now.Sub(r.Since); d > api.SlowRequest {
			slow = append(slow, fmt.Sprintf("%s %s (%s)", r.Method, r.Path, d.Round(time.Second)))
		}
	}
	msg := fmt.Sprintf("%s, %d requests in flight", socket, len(reqs))
	if len(slow) == 0 {
		return Report{State: Ok, Message: msg}
	}
	return Report{State: Warning, Details: slow,
		Message: fmt.Sprintf("%s, %d running for over %s: %s", msg, len(slow), api.SlowRequest, strings.Join(slow, ", "))}
}
