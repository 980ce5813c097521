package policy_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy"
)

// TestConsumeMapState checks that the copy holds the changes made since
// DistillPolicy and that the deltas after it start from the copy.
func TestConsumeMapState(t *testing.T) {
	e := newEngine(db)
	e.repo.Add(parseRules(t, cnpHeader+
		"  ingress:\n  - fromEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: \"6379\", protocol: TCP}]}]\n")...)
	ep := e.endpoint(db)
	employeeKey := policy.Key{Identity: employee.ID, Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: 6379, PrefixLen: 16}

	e.cache.OnIdentitiesChanged(added(employee))
	state := ep.ConsumeMapState()
	if _, ok := state[employeeKey]; !ok || !state.Equal(ep.MapState()) {
		t.Fatalf("ConsumeMapState = %v, want the map state %v with %v", state, ep.MapState(), employeeKey)
	}
	if ch := ep.ConsumeMapChanges(); ch.Len() != 0 {
		t.Errorf("ConsumeMapChanges after ConsumeMapState = %+v, want nothing", ch)
	}

	e.cache.OnIdentitiesChanged(deleted(employee))
	state.Apply(ep.ConsumeMapChanges())
	if _, ok := state[employeeKey]; ok || !state.Equal(ep.MapState()) {
		t.Errorf("copy with the later delta = %v, want the map state %v without %v", state, ep.MapState(), employeeKey)
	}
}
