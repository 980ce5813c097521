package policydiff

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/policy/simulate"
)

// TestNotEnforcedAgainstCilium runs the scenario of a toFQDNs peer and
// an L7 rule, which apiary accepts without enforcing them (the peer
// selects nothing, the L7 rule's L4 part applies), through both engines:
// every verdict must be Cilium's with no DNS data and no proxy.
func TestNotEnforcedAgainstCilium(t *testing.T) {
	data, err := os.ReadFile("../../../policy/testdata/scenarios/fqdn-not-enforced.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sc simulate.Scenario
	if err := yaml.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	c := &Case{Scenario: sc, EgressPortNames: map[string]bool{}}
	for _, n := range sc.Policies {
		doc, err := yaml.Marshal(&n)
		if err != nil {
			t.Fatal(err)
		}
		c.Policies = append(c.Policies, string(doc))
	}
	c.Scenario.Policies = nil
	apiary, err := RunApiary(c)
	if err != nil {
		t.Fatal(err)
	}
	cilium, err := RunCilium(c)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range sc.Queries {
		if apiary[i] != cilium[i] {
			t.Errorf("%+v: apiary %+v, Cilium %+v", q, apiary[i], cilium[i])
		} else {
			t.Logf("%+v: %+v", q, apiary[i])
		}
	}
}
