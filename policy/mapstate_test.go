package policy_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

func TestMapStateDiff(t *testing.T) {
	k := func(id uint32, port uint16) policy.Key {
		return policy.Key{Identity: identity.NumericIdentity(id), Proto: policy.ProtoTCP, Port: port, PrefixLen: 16}
	}
	allow, deny := policy.Entry{}, policy.Entry{Deny: true}
	tests := []struct {
		name      string
		old, next policy.MapState
		wantLen   int
	}{
		{"equal", policy.MapState{k(1, 80): allow}, policy.MapState{k(1, 80): allow}, 0},
		{"added", policy.MapState{}, policy.MapState{k(1, 80): allow}, 1},
		{"deleted", policy.MapState{k(1, 80): allow}, policy.MapState{}, 1},
		{"verdict flipped", policy.MapState{k(1, 80): allow}, policy.MapState{k(1, 80): deny}, 1},
		{"mixed", policy.MapState{k(1, 80): allow, k(2, 80): allow}, policy.MapState{k(2, 80): allow, k(3, 443): deny}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch := tt.old.Diff(tt.next)
			if ch.Len() != tt.wantLen {
				t.Errorf("Diff has %d changes, want %d", ch.Len(), tt.wantLen)
			}
			got := tt.old.Clone()
			got.Apply(ch)
			if !got.Equal(tt.next) {
				t.Errorf("old with the diff applied = %v, want %v", got, tt.next)
			}
		})
	}
}
