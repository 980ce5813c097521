package clustermeshcell_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/clustermesh/clustermeshcell"
)

// clusterService is a ClusterService value as Cilium's writers store it
// (pkg/clustermesh/store: L4Addr has no JSON tags).
func clusterService(cluster string, id uint32, ns, name string, global, shared bool, backends ...string) string {
	var b []string
	for _, ip := range backends {
		b = append(b, fmt.Sprintf(`%q:{"http":{"Protocol":"TCP","Port":8080}}`, ip))
	}
	return fmt.Sprintf(`{"cluster":%q,"namespace":%q,"name":%q,`+
		`"frontends":{"10.96.0.10":{"http":{"Protocol":"TCP","Port":80}}},"backends":{%s},`+
		`"labels":{"app":%q},"selector":{"app":%q},"includeExternal":%t,"shared":%t,"clusterID":%d}`,
		cluster, ns, name, strings.Join(b, ","), name, name, global, shared, id)
}

// services returns GET /v1/service as "ns/name=cluster:backends|..." lines.
func (a *agent) services(t *testing.T) string {
	t.Helper()
	var l models.GlobalServiceList
	if _, err := a.client.Get(context.Background(), "/v1/service", &l); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range l.Items {
		var parts []string
		for _, c := range s.Clusters {
			parts = append(parts, c.Cluster+":"+strings.Join(c.Backends, "+"))
		}
		out = append(out, s.Namespace+"/"+s.Name+"="+strings.Join(parts, "|"))
	}
	return strings.Join(out, ",")
}

func (a *agent) waitServices(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	got := a.services(t)
	for got != want {
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/service = %q, want %q", got, want)
		}
		time.Sleep(20 * time.Millisecond)
		got = a.services(t)
	}
}

// TestGlobalServices: two remote clusters publish services as Cilium's
// JSON under cilium/state/services/v1/<cluster>/; the agent merges the
// shared ones per namespace/name, ignores the not shared and the not
// global ones, skips malformed and foreign values, follows deletions and
// drains a cluster whose config file is removed.
func TestGlobalServices(t *testing.T) {
	c1, r2, r3 := newCluster(t, "cluster1", 1), newCluster(t, "cluster2", 2), newCluster(t, "cluster3", 3)
	for _, r := range []*meshCluster{r2, r3} {
		r.publishClusterConfig(t, true)
		c1.writeMeshConfig(t, r)
	}
	key := func(c *meshCluster, ns, name string) string {
		return "cilium/state/services/v1/" + c.name + "/" + ns + "/" + name
	}
	r2.put(t, key(r2, "default", "web"), clusterService("cluster2", 2, "default", "web", true, true, "10.2.0.1", "10.2.0.2"))
	r2.put(t, key(r2, "default", "db"), clusterService("cluster2", 2, "default", "db", true, false, "10.2.0.3"))
	r2.put(t, key(r2, "default", "local"), clusterService("cluster2", 2, "default", "local", false, false, "10.2.0.4"))
	r2.put(t, key(r2, "default", "broken"), `{"cluster":"cluster2","namespace":"default","name":"broken","backends":{"not-an-ip":{}}}`)
	r2.put(t, key(r2, "default", "foreign"), clusterService("cluster9", 9, "default", "foreign", true, true, "10.9.0.1"))
	r3.put(t, key(r3, "default", "web"), clusterService("cluster3", 3, "default", "web", true, true, "10.3.0.1"))

	a := startAgent(t, c1, "node-a1", "192.0.2.11")
	a.waitServices(t, "default/web=cluster2:10.2.0.1:8080/TCP (http)+10.2.0.2:8080/TCP (http)|cluster3:10.3.0.1:8080/TCP (http)")

	r := a.waitRemote(t, "cluster2", "ready", func(r models.RemoteCluster) bool { return r.Ready })
	if r.Services != 3 {
		t.Errorf("cluster2 services = %d, want 3 (web, db, local)", r.Services)
	}
	for _, p := range r.Prefixes {
		if p.Prefix != "cilium/state/services/v1/cluster2" {
			continue
		}
		if p.Malformed != 1 || p.Refused != 1 || p.Canary != "cilium/synced/cluster2/cilium/state/services/v1" {
			t.Errorf("services prefix = %+v, want 1 malformed, 1 refused, canary of services", p)
		}
	}
	// cluster3 connects on its own schedule: wait for both.
	celltest.Eventually(t, "both clusters ready", func() bool {
		return clustermeshcell.StatusReport(a.mesh()).Message == "2/2 clusters ready, 1 global-services"
	})
	if got := a.metric("apiary_clustermesh_global_services", ""); got != 1 {
		t.Errorf("apiary_clustermesh_global_services = %v, want 1", got)
	}
	if got := a.metric("apiary_clustermesh_remote_cluster_services", "cluster2"); got != 3 {
		t.Errorf("apiary_clustermesh_remote_cluster_services{cluster2} = %v, want 3", got)
	}

	t.Run("db becomes shared, then web of cluster3 is deleted", func(t *testing.T) {
		r2.put(t, key(r2, "default", "db"), clusterService("cluster2", 2, "default", "db", true, true, "10.2.0.3"))
		a.waitServices(t, "default/db=cluster2:10.2.0.3:8080/TCP (http),"+
			"default/web=cluster2:10.2.0.1:8080/TCP (http)+10.2.0.2:8080/TCP (http)|cluster3:10.3.0.1:8080/TCP (http)")
		var names []string
		pages := 0
		for p, err := range a.client.ServicePages(context.Background(), client.ListOptions{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, s := range p.Items {
				names = append(names, s.Namespace+"/"+s.Name)
			}
		}
		if got := joined(names); got != "default/db,default/web" || pages != 2 {
			t.Errorf("pages of 1 = %s in %d pages, want default/db,default/web in 2", got, pages)
		}
		r3.del(t, key(r3, "default", "web"))
		a.waitServices(t, "default/db=cluster2:10.2.0.3:8080/TCP (http),"+
			"default/web=cluster2:10.2.0.1:8080/TCP (http)+10.2.0.2:8080/TCP (http)")
	})
	t.Run("shared=false withdraws the cluster's backends", func(t *testing.T) {
		r2.put(t, key(r2, "default", "db"), clusterService("cluster2", 2, "default", "db", true, false, "10.2.0.3"))
		a.waitServices(t, "default/web=cluster2:10.2.0.1:8080/TCP (http)+10.2.0.2:8080/TCP (http)")
	})
	t.Run("removing the config file drains the cluster", func(t *testing.T) {
		if err := os.Remove(filepath.Join(c1.meshDir, "cluster2")); err != nil {
			t.Fatal(err)
		}
		a.waitServices(t, "")
		if rep := clustermeshcell.StatusReport(a.mesh()); rep.Message != "1/1 clusters ready, 0 global-services" {
			t.Errorf("status = %q", rep.Message)
		}
	})
}
