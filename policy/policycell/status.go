package policycell

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// newStatusProvider adds the "Policy" line to `apiary status`: "12
// rules, revision 7, 3 files", a Warning naming the rejected files.
func newStatusProvider(id cell.FullModuleID, l *loader, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "Policy", func(context.Context) status.Report {
		r := l.statusReport()
		if r.State == status.Ok {
			health.OK(r.Message)
		} else {
			health.Degraded(r.Message, errors.New(r.Message))
		}
		return r
	})
}

// statusReport counts rules and files and lists rejected files.
func (l *loader) statusReport() status.Report {
	rules, rev := len(l.repo.Rules()), l.repo.Revision()
	requests, runs := l.regen.Stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("%d rules, revision %d, %d files", rules, rev, len(l.files))
	details := []string{
		fmt.Sprintf("%d CIDR identities for policy prefixes", len(l.cidrs)),
		fmt.Sprintf("%d regeneration requests in %d runs", requests, runs),
	}
	var bad []string
	for _, name := range slices.Sorted(maps.Keys(l.files)) {
		if err := l.files[name].err; err != nil {
			bad = append(bad, name)
			details = append(details, fmt.Sprintf("%s rejected (previous rules kept): %v", name, err))
		}
	}
	if len(bad) == 0 {
		return status.Report{State: status.Ok, Message: msg, Details: details}
	}
	return status.Report{State: status.Warning, Details: details,
		Message: fmt.Sprintf("%s, rejected: %s", msg, strings.Join(bad, ", "))}
}
