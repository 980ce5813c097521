package policycell

import (
	"maps"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// policyWarnings keeps the warnings of the policies in force, by source
// ("file a.yaml", "CiliumNetworkPolicy default/x"), so that the Policy
// status line names the policies apiary accepted without enforcing all
// of them (a toFQDNs peer, an L7 rule) for as long as they are in force.
type policyWarnings struct {
	mu    sync.Mutex
	bySrc map[string][]string
}

func newPolicyWarnings() *policyWarnings { return &policyWarnings{bySrc: map[string][]string{}} }

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
	return sources, lines
}
