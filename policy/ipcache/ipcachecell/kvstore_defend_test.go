package ipcachecell_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
)

// TestLocalEntriesAreDefended: this node's published entry comes back
// when someone deletes or overwrites it, and the status details say so.
func TestLocalEntriesAreDefended(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	c, _, providers := startWithKVStore(t, srv, testNode)
	raw := srv.Client()
	ctx := context.Background()
	ipcachetest.Applied(t, c)(c.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: netip.MustParseAddr("10.0.1.5"), Identity: 12345, EndpointID: 1234,
	}))
	const key = "cilium/state/ip/v1/default/10.0.1.5"
	var ours string
	celltest.Eventually(t, key, func() bool {
		resp, err := raw.Get(ctx, key)
		if err != nil || len(resp.Kvs) != 1 {
			return false
		}
		ours = string(resp.Kvs[0].Value)
		return true
	})
	restored := func(what string) {
		t.Helper()
		celltest.Eventually(t, "the entry back after "+what, func() bool {
			resp, err := raw.Get(ctx, key)
			return err == nil && len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == ours
		})
	}
	if _, err := raw.Delete(ctx, key); err != nil {
		t.Fatal(err)
	}
	restored("a delete")
	if _, err := raw.Put(ctx, key, `{"IP":"10.0.1.5","HostIP":"192.0.2.99","ID":12345}`); err != nil {
		t.Fatal(err)
	}
	restored("an overwrite")
	celltest.Eventually(t, "the status details", func() bool {
		details := strings.Join(probe(t, providers, "IPCache").Details, "|")
		return strings.Contains(details, "restored 1 local entry that another writer deleted or changed; last: "+key+" (2 in a row)")
	})
}
