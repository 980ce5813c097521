package main

import (
	"flag"
	"testing"

	ciliumpolicy "github.com/apiary-net/apiary/hack/bench/ciliumpolicy"
	"github.com/apiary-net/apiary/hack/bench/policyload"
	"github.com/apiary-net/apiary/policy"

	"github.com/cilium/cilium/pkg/u8proto"
)

// TestEnginesAgree checks that both engines compute the same policy for
// the one-endpoint steps' endpoint (app=0) from the workload, so that
// the table compares the same work: the same verdict for every identity
// on the allowed port and another.
func TestEnginesAgree(t *testing.T) {
	a, err := newApiarySide()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCiliumSide()
	if err != nil {
		t.Fatal(err)
	}
	ep := a.full.endpoint(a.idents[0])
	defer ep.Detach()
	sp, epp, err := endpoint(c.full, c.idents[0])
	if err != nil {
		t.Fatal(err)
	}
	defer detach(c.full, sp, epp)
	ms := ep.MapState()
	// Cilium's has more: its allow-all egress entry is repeated for
	// each of its aggregate identities.
	t.Logf("map entries: apiary %d, Cilium %d", len(ms), epp.Len())
	allowed := 0
	for n := range policyload.Identities {
		id := policyload.ID(n)
		for _, port := range []uint16{80, 81} {
			av := policy.Verdict(ms, a.idents[n].ID, policy.Ingress, policy.ProtoTCP, port)
			cv := ciliumpolicy.Allowed(epp, true, c.idents[n].ID, u8proto.TCP, port)
			if av != cv {
				t.Fatalf("identity %d port %d: apiary allows %v, Cilium %v", id, port, av, cv)
			}
			if av {
				allowed++
			}
		}
	}
	// Policies/Apps policies select app=0, each allowing one other app.
	if want := policyload.Policies / policyload.Apps * policyload.Identities / policyload.Apps; allowed != want {
		t.Errorf("%d identities allowed, want %d", allowed, want)
	}
}

// TestStepsRun runs every step once on each engine, and the heap rows.
func TestStepsRun(t *testing.T) {
	if err := flag.Set("test.benchtime", "1x"); err != nil {
		t.Fatal(err)
	}
	a, err := newApiarySide()
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCiliumSide()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := measure([2]side{a, c}, 1); err != nil {
		t.Fatal(err)
	}
}
