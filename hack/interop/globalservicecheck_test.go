package interop_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/hack/interop"
)

// What TestGlobalServiceWithCilium waits for and checks: the mesh, the
// backends of rebel-base's ClusterIP in the agent's API and in its BPF
// maps, the answers.

// waitMeshed waits for the agent to report c ready and to hold its pods'
// addresses in the ipcache with their identities, from the mesh.
func waitMeshed(t *testing.T, a *interop.ApiaryAgent, c interop.CiliumCluster) {
	t.Helper()
	celltest.EventuallyWithin(t, c.Name+" ready in GET /v1/cluster/mesh", time.Minute, func() bool {
		m, err := a.Client.ClusterMesh(t.Context())
		return err == nil && len(m.Clusters) == 1 && m.Clusters[0].Name == c.Name && m.Clusters[0].Ready
	})
	for _, ep := range c.Endpoints {
		celltest.EventuallyWithin(t, ep.IP.String()+" in the ipcache from the mesh", 30*time.Second, func() bool {
			e, err := a.Client.IPCacheGet(t.Context(), ep.IP.String())
			return err == nil && e.Source == "clustermesh" && e.Identity == uint32(ep.ID)
		})
	}
}

// lbBackend is one backend of rebel-base's ClusterIP as the agent should
// hold it: its address, cluster and the cluster id in the BPF backend
// map (0: this cluster).
type lbBackend struct {
	addr, cluster string
	clusterID     uint32
}

func localBackend(ip string) lbBackend { return lbBackend{ip + ":8080/TCP", "apiary1", 0} }

func remoteBackend(ip string) lbBackend { return lbBackend{ip + ":8080/TCP", "cilium2", 2} }

// waitBackends waits until rebel-base's ClusterIP has exactly the
// active backends want both in GET /v1/service (the service manager,
// with their clusters) and in GET /v1/bpf/lb (the BPF maps the programs
// read, with their cluster ids).
func waitBackends(t *testing.T, a *interop.ApiaryAgent, want ...lbBackend) {
	t.Helper()
	var wantSvc, wantBPF, gotSvc, gotBPF []string
	for _, be := range want {
		wantSvc = append(wantSvc, be.addr+" "+be.cluster)
		wantBPF = append(wantBPF, fmt.Sprintf("%s #%d", be.addr, be.clusterID))
	}
	slices.Sort(wantSvc)
	slices.Sort(wantBPF)
	ok := func() bool {
		gotSvc, gotBPF = serviceBackends(t, a), bpfBackends(t, a)
		return slices.Equal(gotSvc, wantSvc) && slices.Equal(gotBPF, wantBPF)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("rebel-base's backends: GET /v1/service %q, want %q; GET /v1/bpf/lb %q, want %q", gotSvc, wantSvc, gotBPF, wantBPF)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serviceBackends are the active backends of rebel-base's ClusterIP in
// GET /v1/service, as sorted "<address> <cluster>".
func serviceBackends(t *testing.T, a *interop.ApiaryAgent) []string {
	svcs, err := a.Client.Services(t.Context())
	if err != nil {
		t.Logf("GET /v1/service: %v", err)
		return nil
	}
	var out []string
	for _, s := range svcs {
		for _, f := range s.Frontends {
			if s.Namespace+"/"+s.Name != "default/rebel-base" || f.Address != rebelBaseVIP.String()+"/TCP" {
				continue
			}
			for _, be := range f.Backends {
				if be.State == "active" {
					out = append(out, be.Address+" "+be.Cluster)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// bpfBackends are the backends of rebel-base's ClusterIP in the slots
// the programs choose from (1..count), as sorted "<address> #<cluster
// id>".
func bpfBackends(t *testing.T, a *interop.ApiaryAgent) []string {
	var out []string
	for page, err := range a.Client.BPFLBPages(t.Context(), client.ListOptions{}) {
		if err != nil {
			t.Logf("GET /v1/bpf/lb: %v", err)
			return nil
		}
		for _, s := range page.Items {
			if s.Frontend != rebelBaseVIP.String()+"/TCP" || s.NoMaster {
				continue
			}
			for _, sl := range s.Backends {
				if sl.Slot >= 1 && sl.Slot <= s.Count {
					out = append(out, fmt.Sprintf("%s #%d", sl.Address, sl.ClusterID))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// wantAnswers checks that every one of want answered and nothing else.
func wantAnswers(t *testing.T, got map[string]int, want []string) {
	t.Helper()
	names := slices.Sorted(maps.Keys(got))
	if !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Errorf("answers %v, want each of %v and no other", got, want)
		return
	}
	t.Logf("answers %v", got)
}
