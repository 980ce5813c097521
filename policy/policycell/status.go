package policycell

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// newStatusProvider adds the "Policy" line to `apiary status`: "12
// rules, revision 7, 3 files", a Warning naming the rejected files, or
// saying that API-imported policies kept in the state dir could not all
// be restored.
func newStatusProvider(id cell.FullModuleID, l *importer, health cell.Health) status.ProviderOut {
	return status.NewProviderOut(id, "Policy", func(context.Context) status.Report {
		r := l.statusReport()
		status.ReportHealth(health, r, nil)
		return r
	})
}

// statusReport counts rules and files and lists the files rejected
// (bad content) and skipped (not readable: not a regular file, too
// large, ...), with the reasons in the details.
func (l *importer) statusReport() status.Report {
	rules, rev := len(l.repo.Rules()), l.repo.Revision()
	requests, runs := l.regen.Stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := fmt.Sprintf("%d rules, revision %d, %d files", rules, rev, len(l.files))
	details := []string{
		fmt.Sprintf("%d CIDR identities for policy prefixes", len(l.cidrs)),
		fmt.Sprintf("%d regeneration requests in %d runs", requests, runs),
	}
	var rejected, skipped []string
	for _, name := range slices.Sorted(maps.Keys(l.files)) {
		f := l.files[name]
		switch {
		case f.skipped != nil:
			skipped = append(skipped, name)
			details = append(details, fmt.Sprintf("%s skipped: %v%s", name, f.skipped, f.keptRules()))
		case f.err != nil:
			rejected = append(rejected, name)
			details = append(details, fmt.Sprintf("%s rejected: %v%s", name, f.err, f.keptRules()))
		}
	}
	objects, rejectedObjects, objectDetails := l.k8s.status()
	if objects+len(rejectedObjects) > 0 {
		msg += fmt.Sprintf(", %d Kubernetes objects", objects)
	}
	rejected = append(rejected, rejectedObjects...)
	details = append(details, objectDetails...)
	if len(rejected) > 0 {
		msg += ", rejected: " + strings.Join(rejected, ", ")
	}
	if len(skipped) > 0 {
		msg += ", skipped: " + strings.Join(skipped, ", ")
	}
	state := status.Ok
	if len(rejected)+len(skipped) > 0 {
		state = status.Warning
	}
	if warned, lines := l.warns.report(); len(warned) > 0 {
		// Accepted, but not all enforced (a toFQDNs peer, an L7 rule):
		// the user must know, for as long as such a policy is in force.
		state = status.Warning
		msg += ", not all enforced: " + strings.Join(warned, ", ")
		details = append(details, lines...)
	}
	if s := l.store; s != nil {
		details = append(details, "API-imported policies kept in "+s.path)
		if len(s.problems) > 0 {
			state = status.Warning
			msg += fmt.Sprintf(", %d problems restoring API-imported policies", len(s.problems))
			details = append(details, s.problems...)
		}
	}
	return status.Report{State: state, Message: msg, Details: details}
}

// keptRules says that a file's earlier rules stay in force, if any.
func (f fileState) keptRules() string {
	switch f.rules {
	case 0:
		return ""
	case 1:
		return " (its previous rule stays in force)"
	}
	return fmt.Sprintf(" (its previous %d rules stay in force)", f.rules)
}
