package identitycell_test

import (
	"testing"

	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/labels"
)

// TestLabelsFilterDecidesIdentities: with --labels=k8s:app only the app
// label (and the defaults: namespace, cluster) make an identity, so two
// pods that differ in another label share one identity; without the flag
// they get two. Per-pod labels the defaults exclude never count.
func TestLabelsFilterDecidesIdentities(t *testing.T) {
	web := func(tier string) labels.Labels {
		return labels.MustParseList("k8s:app=web", "k8s:tier="+tier,
			"k8s:io.kubernetes.pod.namespace=default", "k8s:pod-template-hash=7d9f")
	}
	tests := []struct {
		name     string
		flags    []string
		wantSame bool
		want     string // labels of the first identity
	}{
		{name: "defaults", wantSame: false,
			want: "k8s:app=web,k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default,k8s:tier=db"},
		{name: "only app", flags: []string{"labels=k8s:app"}, wantSame: true,
			want: "k8s:app=web,k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default"},
	}
	srv := kvstoretest.StartServer(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := startAgent(t, agentConfig{srv: srv, flags: tt.flags})
			db, _, err := a.alloc.AllocateIdentity(ctxFor(t), web("db"))
			must(t, err)
			cache, _, err := a.alloc.AllocateIdentity(ctxFor(t), web("cache"))
			must(t, err)
			if same := db.ID == cache.ID; same != tt.wantSame {
				t.Errorf("tier=db got %d, tier=cache got %d: same = %v, want %v", db.ID, cache.ID, same, tt.wantSame)
			}
			if got := db.Labels.String(); got != tt.want {
				t.Errorf("identity labels = %s, want %s", got, tt.want)
			}
			if got := a.alloc.LookupIdentity(web("db")); got == nil || got.ID != db.ID {
				t.Errorf("LookupIdentity of the same pod labels = %v, want %d", got, db.ID)
			}
		})
	}
}
