package policymap_test

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy"
)

// randomKey draws from a small key space so that changes hit existing
// keys and deny keys cover allow keys often.
func randomKey(r *rand.Rand) policy.Key {
	k := policy.Key{Identity: identityOf(uint32(r.IntN(3))), Direction: policy.Direction(r.IntN(2))}
	switch r.IntN(4) {
	case 0: // any protocol
	case 1:
		k.Proto = policy.ProtoUDP
	default:
		k.Proto = policy.ProtoTCP
		k.PrefixLen = []uint8{0, 8, 14, 16}[r.IntN(4)]
		k.Port = uint16(r.IntN(8)) << (16 - max(k.PrefixLen, 1))
		if k.PrefixLen == 0 {
			k.Port = 0
		}
	}
	return k
}

// TestApplyMatchesSync applies random incremental changes and checks
// after each that the map holds exactly what a full Sync of the same
// state writes.
func TestApplyMatchesSync(t *testing.T) {
	m := openMap(t, 1024)
	if _, _, err := m.Apply(policy.MapChanges{}); !errors.Is(err, policymap.ErrNoBaseline) {
		t.Fatalf("Apply before Sync: %v, want ErrNoBaseline", err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	state := policy.MapState{}
	for range 10 {
		state[randomKey(r)] = policy.Entry{Deny: r.IntN(4) == 0}
	}
	if _, _, err := m.Sync(state); err != nil {
		t.Fatal(err)
	}
	for step := range 300 {
		ch := policy.MapChanges{Adds: map[policy.Key]policy.Entry{}}
		for range 1 + r.IntN(3) {
			if r.IntN(2) == 0 {
				ch.Adds[randomKey(r)] = policy.Entry{Deny: r.IntN(4) == 0}
			} else {
				ch.Deletes = append(ch.Deletes, randomKey(r))
			}
		}
		state.Apply(ch)
		if _, _, err := m.Apply(ch); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		want, err := policymap.Translate(state)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Dump()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("step %d: map holds %d entries, a Sync writes %d", step, len(got), len(want))
		}
		for _, e := range got {
			mk, _ := policymap.NewKey(e.Key)
			if w, ok := want[mk]; !ok || w.Deny != e.Deny {
				t.Fatalf("step %d: entry %v deny=%v, a Sync writes present=%v deny=%v", step, e.Key, e.Deny, ok, w.Deny)
			}
		}
	}
}

func TestApplyRefusesOverflowWhole(t *testing.T) {
	m := openMap(t, 2)
	if _, _, err := m.Sync(policy.MapState{k(1, policy.Egress, 0, 0, 0): {}}); err != nil {
		t.Fatal(err)
	}
	ch := policy.MapChanges{Adds: map[policy.Key]policy.Entry{
		k(2, policy.Egress, 0, 0, 0): {}, k(3, policy.Egress, 0, 0, 0): {},
	}}
	if _, _, err := m.Apply(ch); !errors.Is(err, datapath.ErrPolicyMapFull) {
		t.Fatalf("Apply past the map size: %v, want ErrTooLarge", err)
	}
	if got, _ := m.Dump(); len(got) != 1 {
		t.Errorf("map after a refused Apply holds %+v, want the one synced entry", got)
	}
	// The refused change left the baseline alone: a fitting change applies.
	add, _, err := m.Apply(policy.MapChanges{Adds: map[policy.Key]policy.Entry{k(2, policy.Egress, 0, 0, 0): {}}})
	if err != nil || add != 1 {
		t.Errorf("Apply after the refusal = %d, %v; want 1 added", add, err)
	}
}
