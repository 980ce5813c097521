package policycell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/cells/safefile"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// restoreAPI loads the API-imported policies kept in the state dir into
// the repository, in one revision (start hook, before any endpoint
// regenerates). Every import is parsed again with the current parser: an
// import that no longer parses is logged with its policies and the
// error (which names the field) and left out, the others load, and the
// file as it was is kept aside (.rejected-<time>). A file that cannot be
// decoded is moved aside (.corrupt-<time>). Both make the Policy status
// line a Warning. A file that cannot be read at all fails the start.
func (l *importer) restoreAPI(ctx context.Context) error {
	s := l.store
	data, err := safefile.Read(ctx, s.path, safefile.Limits{MaxSize: apiStateMaxSize})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, safefile.ErrTooLarge), errors.Is(err, safefile.ErrNotRegular):
		l.setAside("corrupt", err)
		return nil
	case err != nil:
		return fmt.Errorf("restore API-imported policies: %w", err)
	}
	st, err := decodeAPIState(data)
	if err != nil {
		l.setAside("corrupt", fmt.Errorf("%s: %w", s.path, err))
		return nil
	}
	imports, rules, problems := l.parseStored(ctx, st)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("restore API-imported policies: %w", err)
	}
	l.mu.Lock()
	s.imports = imports
	l.mu.Unlock()
	if len(problems) > 0 {
		l.setAside("rejected", errors.New(strings.Join(problems, "; ")))
		l.mu.Lock()
		s.problems = append(s.problems, problems...)
		err := s.write(imports) // what loaded, so the next start agrees
		l.mu.Unlock()
		if err != nil {
			return fmt.Errorf("restore API-imported policies: %w", err)
		}
	}
	if len(rules) == 0 {
		return nil // no revision, no regeneration for nothing
	}
	rev, err := l.change(ctx, "api restore", func() uint64 { return l.repo.Add(rules...) })
	l.warns.pruneAPI(l.repo.Rules())
	l.log.Info("Restored API-imported policies", "file", s.path, "imports", len(imports), "rules", len(rules),
		"not-restored", len(problems), "revision", rev)
	return err // CIDR identities: logged, retried at the next change
}

// setAside moves the file aside after err, logs it and records it for
// the status. It keeps a copy of a file it cannot move.
func (l *importer) setAside(what string, err error) {
	s := l.store
	aside, mvErr := s.moveAside(what)
	msg := fmt.Sprintf("%s: %v", s.path, err)
	if mvErr != nil {
		msg += fmt.Sprintf(" (%v)", mvErr)
	} else {
		msg += ", kept as " + aside
	}
	if what == "corrupt" {
		l.log.Error("API-imported policies file is corrupt, starting without it", "file", s.path, "error", err,
			"moved-to", aside, "move-error", mvErr)
		msg = "API-imported policies file corrupt: " + msg
	} else {
		l.log.Warn("Kept the API-imported policies file as it was", "file", s.path, "moved-to", aside, "move-error", mvErr)
		msg = "API-imported policies not all restored; the file as it was: " + aside
		if mvErr != nil {
			msg = "API-imported policies not all restored: " + mvErr.Error()
		}
	}
	l.mu.Lock()
	s.problems = append(s.problems, msg)
	l.mu.Unlock()
}

// parseStored parses every import of the file and returns what loads:
// the imports (with the rules of their policies), the rules in import
// order and what could not be restored.
func (l *importer) parseStored(ctx context.Context, st apiState) ([]*storedImport, []*policyapi.Rule, []string) {
	var (
		imports  []*storedImport
		all      []*policyapi.Rule
		problems []string
	)
	for i, ai := range st.Imports {
		name := fmt.Sprintf("%s import %d", l.store.path, i+1)
		pols, err := l.parse(ctx, name, []byte(ai.Document))
		if ctx.Err() != nil {
			return nil, nil, nil
		}
		if err != nil {
			origins := storedOrigins(ai)
			l.log.Error("Not restoring API-imported policies that no longer parse", "import", i+1,
				"policies", origins, "error", err)
			problems = append(problems, fmt.Sprintf("import %d (%s) not restored: %v", i+1, origins, err))
			continue
		}
		imp, rules, probs := matchStored(i+1, ai, pols)
		problems = append(problems, probs...)
		for _, p := range probs {
			l.log.Error("Not restoring an API-imported policy", "problem", p)
		}
		if imp != nil {
			l.warns.setAPI(pols...) // pruned once the rules are in force
			imports = append(imports, imp)
			all = append(all, rules...)
		}
	}
	return imports, all, problems
}

// matchStored picks, from the policies of an import parsed again, the
// rules the file says are in force, labelled as imported.
func matchStored(n int, ai apiImport, pols []*policyapi.Policy) (*storedImport, []*policyapi.Rule, []string) {
	parsed := map[string]*policyapi.Policy{}
	for _, p := range pols {
		parsed[strings.Join(labelStrings(p.Labels.With(apiSourceLabel)), ",")] = p
	}
	imp := &storedImport{doc: ai.Document}
	var (
		all      []*policyapi.Rule
		problems []string
	)
	for _, ap := range ai.Policies {
		origin := strings.Join(ap.Origin, ",")
		p, ok := parsed[origin]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("import %d: policy %s not restored: the document no longer yields it", n, origin))
			continue
		case len(ap.Kept) != ap.Rules && len(p.Rules) != ap.Rules:
			problems = append(problems, fmt.Sprintf("import %d: policy %s not restored: it now has %d rules, not %d, and only some were in force",
				n, origin, len(p.Rules), ap.Rules))
			continue
		}
		sp := storedPolicy{origin: ap.Origin, rules: make([]*policyapi.Rule, len(p.Rules))}
		for i, r := range p.Rules {
			if len(ap.Kept) == ap.Rules || slices.Contains(ap.Kept, i) {
				r.Labels = r.Labels.With(apiSourceLabel)
				sp.rules[i] = r
				all = append(all, r)
			}
		}
		imp.policies = append(imp.policies, sp)
	}
	if len(imp.policies) == 0 {
		return nil, nil, problems
	}
	return imp, all, problems
}

// storedOrigins names the policies of an import for a log or status.
func storedOrigins(ai apiImport) string {
	names := make([]string, 0, len(ai.Policies))
	for _, p := range ai.Policies {
		names = append(names, strings.Join(p.Origin, ","))
	}
	return "[" + strings.Join(names, "; ") + "]"
}
