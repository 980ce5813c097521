package policy_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

func TestPeerPortTable(t *testing.T) {
	dns := policyapi.NamedPort{Name: "dns", Port: 53, Protocol: policyapi.ProtoUDP}
	tbl := policy.NewPeerPortTable()
	type step struct {
		name        string
		do          func() []identity.NumericIdentity
		wantChanged []identity.NumericIdentity
		wantPorts   map[identity.NumericIdentity][]policyapi.NamedPort
		wantWeb     []identity.NumericIdentity
	}
	steps := []step{
		{
			name: "first endpoint",
			do: func() []identity.NumericIdentity {
				return tbl.Upsert("a", 1000, []policyapi.NamedPort{webTCP8080, webTCP8080})
			},
			wantChanged: []identity.NumericIdentity{1000},
			wantPorts:   map[identity.NumericIdentity][]policyapi.NamedPort{1000: {webTCP8080}},
			wantWeb:     []identity.NumericIdentity{1000},
		},
		{
			name:      "same ports again changes nothing",
			do:        func() []identity.NumericIdentity { return tbl.Upsert("a", 1000, []policyapi.NamedPort{webTCP8080}) },
			wantPorts: map[identity.NumericIdentity][]policyapi.NamedPort{1000: {webTCP8080}},
			wantWeb:   []identity.NumericIdentity{1000},
		},
		{
			name:      "a second endpoint with a port the identity has changes nothing",
			do:        func() []identity.NumericIdentity { return tbl.Upsert("b", 1000, []policyapi.NamedPort{webTCP8080}) },
			wantPorts: map[identity.NumericIdentity][]policyapi.NamedPort{1000: {webTCP8080}},
			wantWeb:   []identity.NumericIdentity{1000},
		},
		{
			name: "a third with another number: the union",
			do: func() []identity.NumericIdentity {
				return tbl.Upsert("c", 1000, []policyapi.NamedPort{webTCP9090, dns})
			},
			wantChanged: []identity.NumericIdentity{1000},
			wantPorts:   map[identity.NumericIdentity][]policyapi.NamedPort{1000: {dns, webTCP8080, webTCP9090}},
			wantWeb:     []identity.NumericIdentity{1000},
		},
		{
			name:        "an endpoint moves to another identity",
			do:          func() []identity.NumericIdentity { return tbl.Upsert("c", 1001, []policyapi.NamedPort{webTCP9090}) },
			wantChanged: []identity.NumericIdentity{1000, 1001},
			wantPorts:   map[identity.NumericIdentity][]policyapi.NamedPort{1000: {webTCP8080}, 1001: {webTCP9090}},
			wantWeb:     []identity.NumericIdentity{1000, 1001},
		},
		{
			name:      "one of two endpoints with the port goes",
			do:        func() []identity.NumericIdentity { return tbl.Delete("a") },
			wantPorts: map[identity.NumericIdentity][]policyapi.NamedPort{1000: {webTCP8080}, 1001: {webTCP9090}},
			wantWeb:   []identity.NumericIdentity{1000, 1001},
		},
		{
			name:        "the last one goes",
			do:          func() []identity.NumericIdentity { return tbl.Upsert("b", 1000, nil) },
			wantChanged: []identity.NumericIdentity{1000},
			wantPorts:   map[identity.NumericIdentity][]policyapi.NamedPort{1001: {webTCP9090}},
			wantWeb:     []identity.NumericIdentity{1001},
		},
		{
			name:      "deleting an unknown endpoint changes nothing",
			do:        func() []identity.NumericIdentity { return tbl.Delete("zz") },
			wantPorts: map[identity.NumericIdentity][]policyapi.NamedPort{1001: {webTCP9090}},
			wantWeb:   []identity.NumericIdentity{1001},
		},
	}
	for _, s := range steps {
		if got := s.do(); !slices.Equal(got, s.wantChanged) {
			t.Fatalf("%s: changed %v, want %v", s.name, got, s.wantChanged)
		}
		for _, id := range []identity.NumericIdentity{1000, 1001} {
			if got := tbl.NamedPorts(id); !slices.Equal(got, s.wantPorts[id]) {
				t.Fatalf("%s: NamedPorts(%d) = %v, want %v", s.name, id, got, s.wantPorts[id])
			}
		}
		if got := tbl.IdentitiesWithPort("web"); !slices.Equal(got, s.wantWeb) {
			t.Fatalf("%s: IdentitiesWithPort(web) = %v, want %v", s.name, got, s.wantWeb)
		}
	}
}
