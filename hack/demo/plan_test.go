package main

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlanEveryScenario lays out every scenario of the policy testdata
// (but those with SCTP queries): each pod with a scenario address is on a node whose pod CIDR
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
				if strings.Contains(err.Error(), "protocol SCTP: the lab runs") {
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
			for _, f := range families {
				nc := n.podCIDRs[f]
				if !nc.IsValid() || famOf(nc.Addr()) != f {
					t.Errorf("%s's %s pod CIDR is %v", n.name, f, nc)
				}
				for _, o := range cidrs {
					if o.Overlaps(nc) {
						t.Errorf("%s's pod CIDR %s overlaps %s", n.name, nc, o)
					}
				}
				cidrs = append(cidrs, nc)
				for a := range p.outside {
					if nc.Contains(a) {
						t.Errorf("%s's pod CIDR %s holds the outside address %s", n.name, nc, a)
					}
				}
			}
		}
	}
	for _, po := range p.pods {
		if po.node == nil || po.node.cluster != po.cluster {
			t.Errorf("%s is on no node of its cluster", po.ref)
			continue
		}
		for _, f := range families {
			if po.relocated[f] {
				if !strings.Contains(strings.Join(p.notes, "\n"), po.ref+":") {
					t.Errorf("%s is relocated without a note", po.ref)
				}
				continue
			}
			ip := po.ips[f]
			if !ip.IsValid() {
				continue
			}
			c := po.node.podCIDRs[f]
			if !c.Contains(ip) || ip == c.Addr() || ip == c.Addr().Next() || ip == lastAddr(c) {
				t.Errorf("%s (%s) is on %s with pod CIDR %s", po.ref, ip, po.node.name, c)
			}
		}
	}
}

// TestPlanRelocates: an address that is the router address of every
// CIDR around it (10.0.0.1, fd00::1) is relocated; the others keep
// theirs, in both families, on the node of their IPv4 address.
func TestPlanRelocates(t *testing.T) {
	data := []byte(`cluster: c1
endpoints:
  - {name: a, namespace: x, ips: [10.0.0.1, "fd00::1"]}
  - {name: b, namespace: x, ips: [10.0.0.2, "fd00::2"]}
  - {name: c, namespace: x, ips: [10.0.0.3, "fd00::3"]}
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
	want := map[string]string{"x/a": ",", "x/b": "10.0.0.2,fd00::2", "x/c": "10.0.0.3,fd00::3", "x/d": ","}
	for _, po := range p.pods {
		var got []string
		for _, ip := range po.ips {
			s := ""
			if ip.IsValid() {
				s = ip.String()
			}
			got = append(got, s)
		}
		if strings.Join(got, ",") != want[po.ref] {
			t.Errorf("%s: lab addresses %q, want %q", po.ref, got, want[po.ref])
		}
	}
	if p.pods[1].node != p.pods[2].node && p.pods[1].node.podCIDRs[v6].Contains(p.pods[2].ips[v6]) {
		t.Errorf("x/c's IPv6 address is in x/b's node's CIDR")
	}
	if !p.pods[0].relocated[v4] || !p.pods[0].relocated[v6] || len(p.notes) != 2 {
		t.Errorf("x/a relocated %v, notes %q; want relocated in both families with two notes", p.pods[0].relocated, p.notes)
	}
	if got := p.outside[netip.MustParseAddr("192.0.2.9")]; got == nil || len(got.tcp)+len(got.udp) != 0 {
		t.Errorf("outside 192.0.2.9: %+v, want an address serving nothing (it is a source only)", got)
	}
	if got := p.pods[3].served.udp; len(got) != 1 || got[0] != 53 {
		t.Errorf("x/d serves UDP %v, want [53]", got)
	}
}
