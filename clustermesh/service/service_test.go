package service_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/kvstore/store"
)

// value is a ClusterService as Cilium's writers store it.
const value = `{"cluster":"cluster2","namespace":"default","name":"web",` +
	`"frontends":{"10.96.0.10":{"http":{"Protocol":"TCP","Port":80}}},` +
	`"backends":{"10.2.0.1":{"http":{"Protocol":"TCP","Port":8080}},"fd00::1":{"dns":{"Protocol":"UDP","Port":53}}},` +
	`"labels":{"app":"web"},"selector":{"app":"web"},"includeExternal":true,"shared":true,"clusterID":2}`

func TestDecode(t *testing.T) {
	s, err := service.Decode("default/web", []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster != "cluster2" || s.ClusterID != 2 || !s.Shared || !s.IncludeExternal ||
		s.Backends["10.2.0.1"]["http"].Port != 8080 || s.Labels["app"] != "web" || s.Selector["app"] != "web" {
		t.Errorf("decoded = %+v", s)
	}
	if err := s.CheckCluster(cluster.Info{ClusterName: "cluster2", ClusterID: 2}); err != nil {
		t.Errorf("CheckCluster: %v", err)
	}

	tests := []struct {
		name, give, key, want string
	}{
		{name: "not json", give: `{`, key: "default/web", want: "decode cluster service"},
		{name: "no namespace", give: `{"name":"web"}`, key: "/web", want: "field namespace"},
		{name: "key mismatch", give: strings.Replace(value, `"name":"web"`, `"name":"api"`, 1), key: "default/web", want: "fields namespace/name"},
		{name: "bad backend ip", give: strings.Replace(value, "10.2.0.1", "10.2.0.300", 1), key: "default/web", want: "field backends"},
		{name: "bad protocol", give: strings.Replace(value, `"UDP"`, `"QUIC"`, 1), key: "default/web", want: "field backends[fd00::1][dns].Protocol"},
		{name: "null port", give: strings.Replace(value, `{"Protocol":"TCP","Port":80}`, `null`, 1), key: "default/web", want: "field frontends[10.96.0.10][http]: null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := service.Decode(tt.key, []byte(tt.give))
			if err == nil || !errors.Is(err, store.ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decode = %v, want a malformed error with %q", err, tt.want)
			}
		})
	}
}

func TestCheckCluster(t *testing.T) {
	s, err := service.Decode("default/web", []byte(value))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []cluster.Info{{ClusterName: "cluster3", ClusterID: 2}, {ClusterName: "cluster2", ClusterID: 3}} {
		if err := s.CheckCluster(c); !errors.Is(err, service.ErrForeignService) || !errors.Is(err, store.ErrRefused) {
			t.Errorf("CheckCluster(%+v) = %v, want ErrForeignService", c, err)
		}
	}
}

func svc(cluster, name string, shared bool, backend string) *service.ClusterService {
	return &service.ClusterService{Cluster: cluster, Namespace: "default", Name: name, Shared: shared, IncludeExternal: true,
		Backends: map[string]service.PortConfiguration{backend: {"": {Protocol: "TCP", Port: 80}}}}
}

// view renders the merged view as "name=cluster:backends|...".
func view(c *service.Cache) string {
	var out []string
	for _, g := range c.List() {
		var parts []string
		for _, cl := range g.Clusters {
			parts = append(parts, cl.Cluster+":"+strings.Join(cl.Backends, "+"))
		}
		out = append(out, g.Name+"="+strings.Join(parts, "|"))
	}
	return fmt.Sprint(strings.Join(out, ","), " n=", c.Len())
}

func TestCache(t *testing.T) {
	c := service.NewCache()
	c.Upsert(svc("c2", "web", true, "10.2.0.1"))
	c.Upsert(svc("c3", "web", true, "10.3.0.1"))
	c.Upsert(svc("c2", "db", false, "10.2.0.2"))
	if got, want := view(c), "web=c2:10.2.0.1:80/TCP|c3:10.3.0.1:80/TCP n=1"; got != want {
		t.Errorf("merged = %q, want %q", got, want)
	}
	c.Upsert(svc("c3", "web", false, "10.3.0.1")) // no longer shared
	c.Upsert(svc("c2", "db", true, "10.2.0.2"))
	if got, want := view(c), "db=c2:10.2.0.2:80/TCP,web=c2:10.2.0.1:80/TCP n=2"; got != want {
		t.Errorf("after updates = %q, want %q", got, want)
	}
	page, more := c.ListAfter("default/db", 1)
	if len(page) != 1 || page[0].Name != "web" || more {
		t.Errorf("ListAfter(default/db, 1) = %+v, %v", page, more)
	}
	if page, more := c.ListAfter("", 1); len(page) != 1 || page[0].Name != "db" || !more {
		t.Errorf("ListAfter(\"\", 1) = %+v, %v", page, more)
	}
	c.Delete("c2", "default/db")
	c.Upsert(svc("c3", "web", true, "10.3.0.9"))
	c.Drain("c2")
	if got, want := view(c), "web=c3:10.3.0.9:80/TCP n=1"; got != want {
		t.Errorf("after drain = %q, want %q", got, want)
	}
}
