package ipcachecell_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// startWithKVStore starts the ipcache with the kvstore, API and status
// cells against srv and returns the cache, an API client and the status
// providers.
func startWithKVStore(t *testing.T, srv *kvstoretest.Server, node ipcache.LocalNode) (ipcache.IPCache, *client.Client, *statusProviders) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	var c ipcache.IPCache
	providers := &statusProviders{}
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(),
		"kvstore-heartbeat-writer=false",
	}, api.Cell, status.Cell, kvstorecell.Cell, store.Cell, baseCells(newFakeAllocator(), node), ipcachecell.Cell,
		celltest.Capture(&c), cell.Invoke(func(p statusProviders) { *providers = p }))
	cl := client.New(socket)
	t.Cleanup(cl.Close)
	return c, cl, providers
}

func TestLocalEndpointsArePublished(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	c, _, providers := startWithKVStore(t, srv, testNode)
	raw := srv.Client()
	ctx := context.Background()
	rev, err := c.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: netip.MustParseAddr("10.0.1.5"), Identity: 12345, EndpointID: 1234, EncryptKey: 3,
		K8sNamespace: "default", K8sPodName: "web-7c9f8d6b5-x2x9q", K8sServiceAccount: "web",
		NamedPorts: []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}, {Name: "dns", Port: 53, Protocol: "UDP"}},
	})
	ipcachetest.Applied(t, c)(rev, err)
	if got := entryOf(c, "10.0.1.5/32"); got != "12345/local" {
		t.Errorf("local entry = %s", got)
	}
	const key = "cilium/state/ip/v1/default/10.0.1.5"
	want := `{"IP":"10.0.1.5","Mask":null,"HostIP":"192.0.2.10","ID":12345,"Key":3,"Metadata":"cilium-global:default:node-a:1234",` +
		`"K8sNamespace":"default","K8sPodName":"web-7c9f8d6b5-x2x9q","K8sServiceAccount":"web","NamedPorts":[{"Name":"http","Port":8080,"Protocol":"TCP"},{"Name":"dns","Port":53,"Protocol":"UDP"}]}`
	celltest.Eventually(t, key, func() bool {
		resp, err := raw.Get(ctx, key)
		return err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == want && resp.Kvs[0].Lease != 0
	})
	celltest.Eventually(t, "the sync canary where Cilium's readers wait for it", func() bool {
		resp, err := raw.Get(ctx, "cilium/synced/default/cilium/state/ip/v1")
		return err == nil && len(resp.Kvs) == 1
	})
	celltest.Eventually(t, "the watch to list", func() bool {
		return strings.Contains(strings.Join(probe(t, providers, "IPCache").Details, ""), " listed")
	})
	line := probe(t, providers, "IPCache")
	if line.State != status.Ok || line.Message != "1 entry, revision "+strconv.FormatUint(uint64(c.Revision()), 10) ||
		strings.Join(line.Details, "|") != "kvstore: cilium/state/ip/v1/default/ listed, 1 local endpoint published (synced)" {
		t.Errorf("IPCache line = %s %q %q", line.State, line.Message, line.Details)
	}

	ipcachetest.Applied(t, c)(c.DeleteLocalEndpoint(netip.MustParseAddr("10.0.1.5")))
	celltest.Eventually(t, "the key deleted", func() bool {
		resp, err := raw.Get(ctx, key)
		return err == nil && len(resp.Kvs) == 0
	})
	if got := entryOf(c, "10.0.1.5/32"); got != "none" {
		t.Errorf("entry after delete = %s", got)
	}
}

func TestClusterEntriesAreWatched(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	ctx := context.Background()
	put := func(key, value string) {
		t.Helper()
		if _, err := raw.Put(ctx, "cilium/state/ip/v1/default/"+key, value); err != nil {
			t.Fatal(err)
		}
	}
	// Written before the agent starts: listed; and one broken value that
	// must not stop the rest.
	put("10.0.2.7", `{"IP":"10.0.2.7","Mask":null,"HostIP":"192.0.2.20","ID":300,"Key":0,"Metadata":"cilium-global:default:node-b:7"}`)
	put("10.0.2.8", `{"IP":"10.0.2.8","Mask":null,"HostIP":"192.0.2.20","ID":`)
	c, cl, providers := startWithKVStore(t, srv, testNode)
	celltest.Eventually(t, "10.0.2.7 from the kvstore", func() bool { return entryOf(c, "10.0.2.7/32") == "300/kvstore via 192.0.2.20" })

	// Written while watching.
	put("10.0.3.0/24", `{"IP":"10.0.3.0","Mask":"////AA==","HostIP":"192.0.2.21","ID":301,"Key":0,"Metadata":""}`)
	put("10.0.1.9", `{"IP":"10.0.1.9","Mask":null,"HostIP":"192.0.2.10","ID":302,"Key":0,"Metadata":""}`)      // this node's own
	put("10.0.4.1", `{"IP":"10.0.4.1","Mask":null,"HostIP":"192.0.2.22","ID":131372,"Key":0,"Metadata":""}`)   // cluster id 2
	put("10.0.4.2", `{"IP":"10.0.4.2","Mask":null,"HostIP":"192.0.2.22","ID":16777300,"Key":0,"Metadata":""}`) // node-local
	put("10.0.2.9", `{"IP":"10.0.2.9","Mask":null,"HostIP":"192.0.2.20","ID":303,"Key":0,"Metadata":""}`)
	put("10.0.2.10", `{"IP":"10.0.2.10","Mask":null,"HostIP":"192.0.2.20","ID":304,"Key":0,"Metadata":"cilium-global:default:node-b:8",`+
		`"K8sNamespace":"prod","K8sPodName":"db-0","K8sServiceAccount":"db","NamedPorts":[{"Name":"redis","Port":6379,"Protocol":"TCP"}]}`)
	celltest.Eventually(t, "10.0.2.9", func() bool { return entryOf(c, "10.0.2.9/32") == "303/kvstore via 192.0.2.20" })
	celltest.Eventually(t, "10.0.2.10", func() bool { return entryOf(c, "10.0.2.10/32") == "304/kvstore via 192.0.2.20" })
	if e, _ := c.Lookup(netip.MustParsePrefix("10.0.2.10/32")); e.K8sNamespace != "prod" || e.K8sPodName != "db-0" ||
		e.K8sServiceAccount != "db" || !reflect.DeepEqual(e.NamedPorts, []policyapi.NamedPort{{Name: "redis", Port: 6379, Protocol: "TCP"}}) {
		t.Errorf("10.0.2.10 = %+v, want the pod, its service account and named ports from the kvstore", e)
	}
	if got := entryOf(c, "10.0.3.0/24"); got != "301/kvstore via 192.0.2.21" {
		t.Errorf("CIDR entry = %s", got)
	}
	for _, skipped := range []string{"10.0.1.9/32", "10.0.2.8/32", "10.0.4.1/32", "10.0.4.2/32"} {
		if got := entryOf(c, skipped); got != "none" {
			t.Errorf("%s = %s, want it skipped", skipped, got)
		}
	}

	line := probe(t, providers, "IPCache")
	if line.State != status.Warning || !strings.HasSuffix(line.Message, ", 3 kvstore entries skipped") {
		t.Errorf("IPCache line = %s %q, want a Warning counting 3 skipped entries", line.State, line.Message)
	}
	details := strings.Join(line.Details, "\n")
	if !strings.Contains(details, "skipped 1 malformed entries and refused 2 of another cluster") {
		t.Errorf("details = %q", details)
	}

	if _, err := raw.Delete(ctx, "cilium/state/ip/v1/default/10.0.2.7"); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "10.0.2.7 withdrawn", func() bool { return entryOf(c, "10.0.2.7/32") == "none" })

	t.Run("API", func(t *testing.T) {
		list, err := cl.IPCacheList(ctx, "10.0.3.0/24")
		if err != nil || len(list.Entries) != 1 || !reflect.DeepEqual(list.Entries[0], models.IPCacheEntry{
			Prefix: "10.0.3.0/24", Identity: 301, Source: "kvstore", TunnelPeer: "192.0.2.21",
		}) {
			t.Errorf("GET /v1/ipcache?prefix=10.0.3.0/24 = %+v, %v", list, err)
		}
		if list.Revision == 0 {
			t.Error("list without a revision")
		}
		e, err := cl.IPCacheGet(ctx, "10.0.3.77")
		if err != nil || e.Prefix != "10.0.3.0/24" {
			t.Errorf("GET /v1/ipcache/10.0.3.77 = %+v, %v", e, err)
		}
		var apiErr *client.APIError
		if _, err := cl.IPCacheGet(ctx, "10.200.0.1"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound ||
			apiErr.Message != "no ipcache entry holds 10.200.0.1" {
			t.Errorf("IP in no entry: %v, want 404", err)
		}
		if _, err := cl.IPCacheGet(ctx, "not-an-ip"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("bad IP: %v, want 400", err)
		}
		if _, err := cl.IPCacheList(ctx, "10.0.0.0/33"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
			!strings.Contains(apiErr.Message, "query parameter prefix") {
			t.Errorf("bad prefix: %v, want 400 naming the parameter", err)
		}
	})
}

// statusProviders captures the hive's status providers.
type statusProviders struct {
	cell.In

	All []status.Provider `group:"status-providers"`
}

// probe runs the probe of the named status line.
func probe(t *testing.T, providers *statusProviders, name string) status.Report {
	t.Helper()
	for _, p := range providers.All {
		if p.Name == name {
			return p.Probe(context.Background())
		}
	}
	t.Fatalf("no status line %q", name)
	return status.Report{}
}
