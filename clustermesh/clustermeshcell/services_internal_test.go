package clustermeshcell

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// TestListServicesPages: pages of every size over services that are
// only global (remote), only in the manager, or both list each service
// once, in order, merged.
func TestListServicesPages(t *testing.T) {
	cache := service.NewCache()
	m := svcmanager.New(nil, svcmanager.Node{Name: "node1"}, slog.New(slog.DiscardHandler))
	remote := func(name string) {
		cache.Upsert(&service.ClusterService{Cluster: "c2", ClusterID: 2, Namespace: "default", Name: name, Shared: true,
			Backends: map[string]service.PortConfiguration{"10.2.0.1": {"": {Protocol: "TCP", Port: 80}}}})
	}
	local := func(name string, ip string, global bool) {
		m.Upsert(svcmanager.SourceKubernetes, &svcmanager.Service{Namespace: "default", Name: name, Global: global,
			Frontends: []svcmanager.Frontend{{Addr: datapath.L3n4Addr{Addr: netip.MustParseAddr(ip), Port: 80, Proto: datapath.ProtoTCP},
				Type: datapath.SVCTypeClusterIP}}})
	}
	remote("a")
	local("b", "10.96.0.2", false)
	remote("c")
	local("c", "10.96.0.3", true)
	m.SetRemoteBackends("default/c", service.RemoteBackends(cache.Get("default/c"), "c1"))
	local("d", "10.96.0.4", false)
	remote("e")
	remote("f")
	remote("g")
	want := "a:c2:0 b::1 c:c2:1(10.2.0.1:80/TCP c2) d::1 e:c2:0 f:c2:0 g:c2:0"
	for limit := 1; limit <= 8; limit++ {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var got []string
			after := ""
			for range 10 {
				page, more := listServices(cache, m, "c1", after, limit)
				if len(page) > limit {
					t.Fatalf("page of %d, limit %d", len(page), limit)
				}
				for _, s := range page {
					got = append(got, render(s))
					after = s.Namespace + "/" + s.Name
				}
				if !more {
					break
				}
			}
			if strings.Join(got, " ") != want {
				t.Errorf("pages = %q, want %q", strings.Join(got, " "), want)
			}
		})
	}
}

// render is "name:clusters:frontends(backend cluster ...)".
func render(s models.GlobalService) string {
	var clusters []string
	for _, c := range s.Clusters {
		clusters = append(clusters, c.Cluster)
	}
	out := fmt.Sprintf("%s:%s:%d", s.Name, strings.Join(clusters, ","), len(s.Frontends))
	for _, f := range s.Frontends {
		var bes []string
		for _, be := range f.Backends {
			bes = append(bes, be.Address+" "+be.Cluster)
		}
		if len(bes) > 0 {
			out += "(" + strings.Join(bes, ", ") + ")"
		}
	}
	return out
}
