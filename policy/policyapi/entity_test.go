package policyapi_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// entityMatches reports whether any selector of e matches ls.
func entityMatches(t *testing.T, e policyapi.Entity, ls labels.Labels) bool {
	t.Helper()
	sels, ok := e.Selectors("cluster1")
	if !ok {
		t.Fatalf("entity %q unknown", e)
	}
	return slices.ContainsFunc(sels, func(s policyapi.EndpointSelector) bool { return s.Matches(ls) })
}

func TestEntitySelectors(t *testing.T) {
	localPod := pod(t, "cluster1", "shop", "app=web")
	remotePod := pod(t, "cluster2", "shop", "app=web")
	for _, tc := range []struct {
		name string
		give policyapi.Entity
		yes  []labels.Labels
		no   []labels.Labels
	}{
		{"world", policyapi.EntityWorld,
			[]labels.Labels{reserved(identity.ReservedWorld), reserved(identity.ReservedWorldIPv4), reserved(identity.ReservedWorldIPv6), cidr("192.0.2.0/24")},
			[]labels.Labels{reserved(identity.ReservedHost), localPod, remotePod}},
		{"world-ipv6", policyapi.EntityWorldIPv6,
			[]labels.Labels{reserved(identity.ReservedWorldIPv6)},
			[]labels.Labels{reserved(identity.ReservedWorldIPv4), reserved(identity.ReservedWorld)}},
		{"cluster", policyapi.EntityCluster,
			[]labels.Labels{localPod, reserved(identity.ReservedHost), reserved(identity.ReservedRemoteNode), reserved(identity.ReservedHealth),
				reserved(identity.ReservedInit), reserved(identity.ReservedKubeAPIServer), reserved(identity.ReservedIngress), reserved(identity.ReservedUnmanaged)},
			[]labels.Labels{remotePod, reserved(identity.ReservedWorld), cidr("10.0.0.0/8")}},
		{"cluster-mesh", policyapi.EntityClusterMesh,
			[]labels.Labels{localPod, remotePod, reserved(identity.ReservedHost), reserved(identity.ReservedRemoteNode), reserved(identity.ReservedHealth),
				reserved(identity.ReservedInit), reserved(identity.ReservedKubeAPIServer), reserved(identity.ReservedIngress), reserved(identity.ReservedUnmanaged)},
			[]labels.Labels{reserved(identity.ReservedWorld), reserved(identity.ReservedWorldIPv4), cidr("10.0.0.0/8")}},
		{"none", policyapi.EntityNone, nil,
			[]labels.Labels{localPod, remotePod, reserved(identity.ReservedWorld), cidr("10.0.0.0/8"), reserved(identity.ReservedHost), reserved(identity.ReservedInit)}},
		{"all", policyapi.EntityAll,
			[]labels.Labels{localPod, remotePod, reserved(identity.ReservedWorld), cidr("10.0.0.0/8"), reserved(identity.ReservedHost)}, nil},
		{"host", policyapi.EntityHost,
			[]labels.Labels{reserved(identity.ReservedHost)},
			[]labels.Labels{reserved(identity.ReservedRemoteNode), localPod}},
		{"remote-node", policyapi.EntityRemoteNode,
			[]labels.Labels{reserved(identity.ReservedRemoteNode)},
			[]labels.Labels{reserved(identity.ReservedHost)}},
		{"kube-apiserver", policyapi.EntityKubeAPIServer,
			[]labels.Labels{reserved(identity.ReservedKubeAPIServer)},
			[]labels.Labels{reserved(identity.ReservedHost)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ls := range tc.yes {
				if !entityMatches(t, tc.give, ls) {
					t.Errorf("%s does not match %s", tc.give, ls)
				}
			}
			for _, ls := range tc.no {
				if entityMatches(t, tc.give, ls) {
					t.Errorf("%s matches %s", tc.give, ls)
				}
			}
		})
	}
}

func TestEntitiesCoverEveryReservedIdentity(t *testing.T) {
	want := []policyapi.Entity{"all", "cluster", "cluster-mesh", "health", "host", "ingress", "init", "kube-apiserver",
		"none", "remote-node", "unmanaged", "world", "world-ipv4", "world-ipv6"}
	if got := policyapi.Entities(); !slices.Equal(got, want) {
		t.Errorf("Entities() = %v, want %v", got, want)
	}
	for _, id := range identity.ReservedIdentities() {
		if !entityMatches(t, policyapi.EntityAll, id.Labels) {
			t.Errorf("all does not match %s", id.Labels)
		}
		matched := false
		for _, e := range policyapi.Entities() {
			if e != policyapi.EntityAll && entityMatches(t, e, id.Labels) {
				matched = true
			}
		}
		if !matched {
			t.Errorf("no entity but all selects reserved identity %s", id.Labels)
		}
	}
	if _, ok := policyapi.Entity("wrold").Selectors("c"); ok {
		t.Error("an unknown entity has selectors")
	}
}
