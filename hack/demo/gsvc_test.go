package main

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// TestServiceDoc: the walk-through's --lb-state-file is a file the agent
// takes: the global Service with the cluster's pods, then with affinity
// local, then with no endpoint (the pods deleted).
func TestServiceDoc(t *testing.T) {
	c1 := &cluster{name: "cluster1", id: 1}
	n1 := &node{cluster: c1, name: "cluster1-node1"}
	w := &walkthrough{local: c1, vips: map[*cluster]netip.Addr{c1: netip.MustParseAddr("10.96.100.10")},
		bases: map[*cluster][]*gsvcPod{c1: {{name: "rebel-base-0", node: n1, ip: netip.MustParseAddr("10.3.3.4")}}}}
	parse := func() *svcmanager.Service {
		t.Helper()
		svcs, err := svcmanager.ParseStateFile("services.yaml", []byte(w.serviceDoc(c1)))
		if err != nil {
			t.Fatalf("%v\n%s", err, w.serviceDoc(c1))
		}
		if len(svcs) != 1 {
			t.Fatalf("%d services, want 1", len(svcs))
		}
		return svcs[0]
	}
	s := parse()
	fe := s.Frontends[0].Addr
	if s.NamespacedName() != "default/rebel-base" || !s.Global || !s.Shared || s.Affinity != svcmanager.AffinityNone ||
		fe != (datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.100.10"), Port: 80, Proto: datapath.ProtoTCP}) ||
		len(s.Backends) != 1 || s.Backends[0].Addr.Addr != netip.MustParseAddr("10.3.3.4") || s.Backends[0].NodeName != "cluster1-node1" {
		t.Errorf("service = %+v", s)
	}
	w.affinity = "local"
	if s := parse(); s.Affinity != svcmanager.AffinityLocal {
		t.Errorf("affinity = %q, want local", s.Affinity)
	}
	w.bases[c1] = nil
	if s := parse(); len(s.Backends) != 0 || !s.Global {
		t.Errorf("without pods: %+v", s)
	}
}

// TestCheck: a step passes only when every call was answered and the
// answers came from exactly the clusters it wants.
func TestCheck(t *testing.T) {
	c1, c2 := &cluster{name: "cluster1"}, &cluster{name: "cluster2"}
	tests := []struct {
		name string
		give tally
		want []*cluster
		ok   bool
	}{
		{"both", tally{byCluster: map[string]int{"cluster1": 3, "cluster2": 4}}, []*cluster{c1, c2}, true},
		{"one of both", tally{byCluster: map[string]int{"cluster1": 7}}, []*cluster{c1, c2}, false},
		{"local only", tally{byCluster: map[string]int{"cluster1": 7}}, []*cluster{c1}, true},
		{"a remote answer with affinity local", tally{byCluster: map[string]int{"cluster1": 6, "cluster2": 1}}, []*cluster{c1}, false},
		{"a failed call", tally{byCluster: map[string]int{"cluster2": 6}, failed: 1, firstErr: errors.New("i/o timeout")}, []*cluster{c2}, false},
		{"no answer", tally{byCluster: map[string]int{}}, []*cluster{c2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := &walkthrough{l: &lab{out: &out}}
			err := w.check("step", tt.give, tt.want...)
			if (err == nil) != tt.ok {
				t.Errorf("check = %v, want ok %v", err, tt.ok)
			}
			if verdict := map[bool]string{true: ": ok\n", false: ": WRONG\n"}[tt.ok]; !strings.HasSuffix(out.String(), verdict) {
				t.Errorf("printed %q, want it to end in %q", out.String(), verdict)
			}
		})
	}
}
