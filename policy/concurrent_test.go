package policy_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestConcurrentChanges churns identities while policies are replaced
// and endpoints re-distilled, then checks the final map state against a
// computation from scratch; run with -race.
func TestConcurrentChanges(t *testing.T) {
	w := newPropWorld(7)
	e := newEngine(propEndpoint)
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range 200 {
			id := w.pool[i%len(w.pool)]
			if i/len(w.pool)%2 == 0 {
				e.cache.OnIdentitiesChanged(added(id))
			} else {
				e.cache.OnIdentitiesChanged(deleted(id))
			}
		}
	})
	rules := make(map[string][]*policyapi.Rule)
	for i := range 20 {
		name := fmt.Sprintf("p%d", i%3)
		rules[name] = []*policyapi.Rule{w.randomRule(name)}
	}
	ep := e.endpoint(propEndpoint, propNamed...)
	for i := range 20 {
		name := fmt.Sprintf("p%d", i%3)
		e.repo.ReplaceByLabels(origin(name), rules[name]...)
		ep.Detach()
		ep = e.endpoint(propEndpoint, propNamed...)
	}
	wg.Wait()

	// The identity goroutine ends with 200 changes over the pool: work
	// out which identities are present then.
	for i := range 200 {
		id := w.pool[i%len(w.pool)]
		if i/len(w.pool)%2 == 0 {
			w.present[id.ID] = id
		} else {
			delete(w.present, id.ID)
		}
	}
	w.policies = rules
	want, _ := w.fromScratch()
	if got := ep.MapState(); !got.Equal(want) {
		t.Errorf("map state after concurrent changes\n%v\nwant\n%v", got, want)
	}
}
