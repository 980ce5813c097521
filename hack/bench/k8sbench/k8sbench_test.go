package k8sbench_test

import (
	"strings"
	"testing"

	"github.com/apiary-net/apiary/hack/bench/k8sbench"
)

// TestTiny runs the whole benchmark on a small cluster (100 pods, half
// of them on this node), so that `make test` exercises the code path:
// both sides must hold every object of this node after their sync.
// Times are printed, not judged.
func TestTiny(t *testing.T) {
	s := k8sbench.Size{Pods: 100, LocalPods: 50, Namespaces: 10, Nodes: 3, Policies: 20}
	r, err := k8sbench.Measure(t, s, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Apiary.Took) != 2 || len(r.Peer.Took) != 2 {
		t.Errorf("results = %+v, want 2 rounds per side", r)
	}
	at, ah := r.Apiary.Median()
	pt, ph := r.Peer.Median()
	t.Logf("apiary %s %d B, client-go %s %d B", at, ah, pt, ph)
}

func TestSizeValidate(t *testing.T) {
	tests := []struct {
		name string
		give k8sbench.Size
		want string // "" is valid
	}{
		{name: "full", give: k8sbench.Full},
		{name: "no namespace", give: k8sbench.Size{Pods: 1, LocalPods: 1, Nodes: 1}, want: "namespaces"},
		{name: "no node", give: k8sbench.Size{Namespaces: 1}, want: "nodes"},
		{name: "more local than all", give: k8sbench.Size{Pods: 1, LocalPods: 2, Namespaces: 1, Nodes: 1}, want: "local-pods"},
		{name: "others need a second node", give: k8sbench.Size{Pods: 2, LocalPods: 1, Namespaces: 1, Nodes: 1}, want: "nodes"},
		{name: "negative policies", give: k8sbench.Size{Policies: -1, Namespaces: 1, Nodes: 1}, want: "policies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.give.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want an error about %s", err, tt.want)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	nps, cnps, ccnps := k8sbench.Full.Kinds()
	if nps != 500 || cnps != 400 || ccnps != 100 {
		t.Errorf("Full.Kinds() = %d, %d, %d; want 500, 400, 100", nps, cnps, ccnps)
	}
}

// TestCEPTiny runs the CiliumEndpoint case on a small cluster (300
// endpoints on 3 nodes, 4 watching nodes, one not a host of endpoints):
// every watcher of both sides must see every other node's endpoint.
// Times are printed, not judged.
func TestCEPTiny(t *testing.T) {
	s := k8sbench.CEPSize{Nodes: 3, Endpoints: 300, Namespaces: 3, Watchers: 4}
	r, err := k8sbench.MeasureCEP(t, s, 1)
	if err != nil {
		t.Fatal(err)
	}
	at, ah := r.Apiary.Median()
	pt, ph := r.Peer.Median()
	t.Logf("apiary %s %d B, client-go %s %d B", at, ah, pt, ph)
}
