package selectorcache

import (
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
)

// TestIDSetMatchesMap adds and removes random identities, across the
// change from slice to map, and compares the set with a map after each
// step.
func TestIDSetMatchesMap(t *testing.T) {
	for seed := range int64(20) {
		rnd := rand.New(rand.NewSource(seed))
		var s idSet
		want := map[identity.NumericIdentity]struct{}{}
		for step := range 300 {
			id := identity.NumericIdentity(rnd.Intn(3 * idSetSmall))
			if rnd.Intn(3) == 0 {
				s.remove(id)
				delete(want, id)
			} else {
				s.add(id)
				want[id] = struct{}{}
			}
			got := slices.Sorted(s.all())
			if !slices.Equal(got, slices.Sorted(maps.Keys(want))) || s.len() != len(want) {
				t.Fatalf("seed %d step %d: set %v (len %d), want %v", seed, step, got, s.len(), slices.Sorted(maps.Keys(want)))
			}
		}
	}
}
