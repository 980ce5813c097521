package policycell

import (
	"maps"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// policyWarnings keeps the warnings of the policies in force, by source
// ("file a.yaml", "CiliumNetworkPolicy default/x"), so that the Policy
// status line names the policies apiary accepted without enforcing all
// of them (a toFQDNs peer, an L7 rule) for as long as they are in force.
type policyWarnings struct {
	mu    sync.Mutex
	bySrc map[string][]string
	// api: the API-imported policies' warnings by source, with the
	// origin labels their rules carry (dropped once no rule in force
	// carries them: deleted or replaced by a policy without warnings).
	api map[string]apiWarnings
}

type apiWarnings struct {
	origin labels.Labels
	msgs   []string
}

func newPolicyWarnings() *policyWarnings {
	return &policyWarnings{bySrc: map[string][]string{}, api: map[string]apiWarnings{}}
}

// setAPI records the warnings of API-imported policies (the origin of
// each is its labels with the API source label), replacing those of
// earlier imports with the same origin.
func (w *policyWarnings) setAPI(pols ...*policyapi.Policy) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pols {
		origin := p.Labels.With(apiSourceLabel)
		src := "API import " + p.String()
		if len(p.Warnings) == 0 {
			delete(w.api, src)
			continue
		}
		aw := apiWarnings{origin: origin}
		for _, warn := range p.Warnings {
			aw.msgs = append(aw.msgs, warn.String())
		}
		w.api[src] = aw
	}
}

// pruneAPI forgets the API imports' warnings whose origin no rule in
// force carries any more.
func (w *policyWarnings) pruneAPI(inForce []*policyapi.Rule) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for src, aw := range w.api {
		if !slices.ContainsFunc(inForce, func(r *policyapi.Rule) bool { return r.Labels.HasAll(aw.origin) }) {
			delete(w.api, src)
		}
	}
}

// set replaces the warnings of source by those of pols (none: forget it).
func (w *policyWarnings) set(source string, pols ...*policyapi.Policy) {
	var msgs []string
	for _, p := range pols {
		for _, warn := range p.Warnings {
			msgs = append(msgs, warn.String())
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(msgs) == 0 {
		delete(w.bySrc, source)
		return
	}
	w.bySrc[source] = msgs
}

// report returns the sources with warnings, sorted, and every warning.
func (w *policyWarnings) report() (sources, lines []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	sources = slices.Sorted(maps.Keys(w.bySrc))
	for _, s := range sources {
		lines = append(lines, w.bySrc[s]...)
	}
	api := slices.Sorted(maps.Keys(w.api))
	for _, s := range api {
		lines = append(lines, w.api[s].msgs...)
	}
	return append(sources, api...), lines
}
