package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanEveryScenario lays out every IPv4 scenario of the policy
// testdata: each pod with a scenario address is on a node whose pod CIDR
// holds it (not as a reserved address), node CIDRs do not overlap, no
// CIDR holds an address of the outside host, and relocated pods are
// named in a note.
func TestPlanEveryScenario(t *testing.T) {
	files, err := filepath.Glob(scenarios + "*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newPlan(f, data)
			if err != nil {
				if strings.Contains(err.Error(), "the lab is IPv4 only") {
					t.Skip(err)
				}
				t.Fatal(err)
			}
			checkPlan(t, p)
		})
	}
}

func checkPlan(t *testing.T, p *plan) {
	t.Helper()
	var cidrs []netip.Prefix
	for _, c := range p.clusters {
		if len(c.nodes) != nodesPerCluster {
			t.Errorf("cluster %s has %d nodes", c.name, len(c.nodes))
		}
		for _, n := range c.nodes {
			for _, o := range cidrs {
				if o.Overlaps(n.podCIDR) {
					t.Errorf("%s's pod CIDR %s overlaps %s", n.name, n.podCIDR, o)
				}
			}
			cidrs = append(cidrs, n.podCIDR)
			for a := range p.outside {
				if n.podCIDR.Contains(a) {
					t.Errorf("%s's pod CIDR %s holds the outside address %s", n.name, n.podCIDR, a)
				}
			}
		}
	}
	for _, po := range p.pods {
		if po.node == nil || po.node.cluster != po.cluster {
			t.Errorf("%s is on no node of its cluster", po.ref)
			continue
		}
		if po.relocated {
			if !strings.Contains(strings.Join(p.notes, "\n"), po.ref+":") {
				t.Errorf("%s is relocated without a note", po.ref)
			}
			continue
		}
		if !po.ip.IsValid() {
			continue
		}
		c := po.node.podCIDR
		if !c.Contains(po.ip) || po.ip == c.Addr() || po.ip == c.Addr().Next() || po.ip == lastAddr(c) {
			t.Errorf("%s (%s) is on %s with pod CIDR %s", po.ref, po.ip, po.node.name, c)
		}
	}
}

// TestPlanRelocates: an address that is the router address of every
// CIDR around it (10.0.0.1) is relocated; the others keep theirs.
func TestPlanRelocates(t *testing.T) {
	data := []byte(`cluster: c1
endpoints:
  - {name: a, namespace: x, ips: [10.0.0.1]}
  - {name: b, namespace: x, ips: [10.0.0.2]}
  - {name: c, namespace: x, ips: [10.0.0.3]}
  - {name: d, namespace: x}
queries:
  - {from: x/a, to: 10.0.0.2, port: 80}
  - {from: 192.0.2.9, to: x/d, port: 53, protocol: UDP}
`)
	p, err := newPlan("relocate.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	checkPlan(t, p)
	want := map[string]string{"x/a": "", "x/b": "10.0.0.2", "x/c": "10.0.0.3", "x/d": ""}
	for _, po := range p.pods {
		got := ""
		if po.ip.IsValid() {
			got = po.ip.String()
		}
		if got != want[po.ref] {
			t.Errorf("%s: lab address %q, want %q", po.ref, got, want[po.ref])
		}
	}
	if !p.pods[0].relocated || len(p.notes) != 1 {
		t.Errorf("x/a relocated %v, notes %q; want relocated with one note", p.pods[0].relocated, p.notes)
	}
	if got := p.outside[netip.MustParseAddr("192.0.2.9")]; got == nil || len(got.tcp)+len(got.udp) != 0 {
		t.Errorf("outside 192.0.2.9: %+v, want an address serving nothing (it is a source only)", got)
	}
	if got := p.pods[3].served.udp; len(got) != 1 || got[0] != 53 {
		t.Errorf("x/d serves UDP %v, want [53]", got)
	}
}
