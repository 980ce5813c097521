package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestBadIdentityKeyKeepsTheAgentHealthy checks a bad identity key on the
// whole agent: `etcdctl put cilium/state/identities/v1/id/abc 'k8s:a=b;'`
// makes the Identities line a Warning, and /v1/healthz stays 200.
func TestBadIdentityKeyKeepsTheAgentHealthy(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	socket, flags := tempFlags(t)
	celltest.StartWithFlags(t, append(flags, "prometheus-serve-addr=127.0.0.1:0",
		"kvstore=etcd", "kvstore-opt=etcd.address="+srv.Endpoint(), "node-name=node-a", "node-ip=192.0.2.10"), agent.Agent)
	c := client.New(socket)
	defer c.Close()
	ctx := t.Context()
	waitStatus(t, c, "everything Ok", func(st *models.Status) bool { return st.State == status.Ok })
	if _, err := srv.Client().Put(ctx, "cilium/state/identities/v1/id/abc", "k8s:a=b;"); err != nil {
		t.Fatal(err)
	}
	st := waitStatus(t, c, "the Identities warning", func(st *models.Status) bool {
		for _, e := range st.Entries {
			if e.Name == "Identities" && e.State == status.Warning && strings.HasSuffix(e.Message, "1 kvstore entries skipped") {
				return true
			}
		}
		return false
	})
	if st.State != status.Warning {
		t.Errorf("overall = %s, want Warning", st.State)
	}
	for _, e := range st.Entries {
		// Not configured: no clustermesh, no Kubernetes, no --pod-cidr.
		disabled := e.Name == "ClusterMesh" || e.Name == "IPAM" || e.Name == "Hubble" || strings.HasPrefix(e.Name, "Kubernetes")
		if e.Name != "Identities" && e.State != status.Ok && (!disabled || e.State != status.Disabled) {
			t.Errorf("%s: %s %s, want Ok", e.Name, e.State, e.Message)
		}
	}
	h, err := c.Healthz(ctx)
	if err != nil || h.Status != models.HealthzOK {
		t.Errorf("healthz = %+v, %v; want ok", h, err)
	}
}

// waitStatus polls the agent's status (bounded) until ok accepts it.
func waitStatus(t *testing.T, c *client.Client, what string, ok func(*models.Status) bool) *models.Status {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last *models.Status
	for time.Now().Before(deadline) {
		st, err := c.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if last = st; ok(st) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s; last status %+v", what, last)
	return nil
}
