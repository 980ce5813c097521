package ipcachesync_test

import (
	"context"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/ipcachesync"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachetest"
	"github.com/apiary-net/apiary/policy/source"
)

// TestCell starts the sync with a real ipcache (standalone) on the fake
// datapath whose ipcache map holds an entry a previous agent left: the
// initial reconcile removes it, and later ipcache changes reach the map.
func TestCell(t *testing.T) {
	f := datapathtest.New()
	stale := netip.MustParsePrefix("10.9.9.9/32")
	if err := f.ApplyIPCache([]datapath.IPCacheMapChange{{Entry: datapath.IPCacheMapEntry{Prefix: stale, Identity: 999}}}); err != nil {
		t.Fatal(err)
	}
	var c ipcache.IPCache
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=192.0.2.10"},
		localnode.Cell, kvstorecell.Cell, store.Cell, identitycell.Cell, ipcachecell.Cell,
		datapathtest.CellOf(f), ipcachesync.Cell, celltest.Capture(&c))
	// The cache is empty (no node manager puts the host in it).
	celltest.Eventually(t, "the stale entry removed", func() bool { return len(f.IPCacheMap()) == 0 })

	cidr := netip.MustParsePrefix("10.0.0.0/8")
	ipcachetest.Applied(t, c)(c.UpsertMetadata(cidr, source.Generated, "test", ipcache.Metadata{Identity: 16777300}))
	celltest.Eventually(t, "the new entry in the map", func() bool { return f.IPCacheMap()[cidr].Identity == 16777300 })
	ipcachetest.Applied(t, c)(c.RemoveMetadata(cidr, source.Generated, "test"))
	celltest.Eventually(t, "the entry deleted from the map", func() bool {
		_, ok := f.IPCacheMap()[cidr]
		return !ok
	})
}

// remotes is a RemoteSync that syncs when released.
type remotes chan struct{}

func (r remotes) WaitForRemotesSynced(ctx context.Context) error {
	select {
	case <-r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestCellWaitsForRemotes: the stale entry (which may be a remote
// cluster's, not listed yet) stays until the remotes synced, while
// changes are written meanwhile.
func TestCellWaitsForRemotes(t *testing.T) {
	f := datapathtest.New()
	stale := netip.MustParsePrefix("10.9.9.9/32")
	if err := f.ApplyIPCache([]datapath.IPCacheMapChange{{Entry: datapath.IPCacheMapEntry{Prefix: stale, Identity: 999}}}); err != nil {
		t.Fatal(err)
	}
	r := make(remotes)
	var c ipcache.IPCache
	celltest.StartWithFlags(t, []string{"node-name=node-a", "node-ip=192.0.2.10"},
		localnode.Cell, kvstorecell.Cell, store.Cell, identitycell.Cell, ipcachecell.Cell,
		datapathtest.CellOf(f), ipcachesync.Cell, celltest.Capture(&c),
		cell.Provide(func() datapath.RemoteSync { return r }))
	cidr := netip.MustParsePrefix("10.0.0.0/8")
	ipcachetest.Applied(t, c)(c.UpsertMetadata(cidr, source.Generated, "test", ipcache.Metadata{Identity: 16777300}))
	celltest.Eventually(t, "the new entry in the map", func() bool { return f.IPCacheMap()[cidr].Identity == 16777300 })
	if _, ok := f.IPCacheMap()[stale]; !ok {
		t.Fatal("the stale entry was removed before the remotes synced")
	}
	close(r)
	celltest.Eventually(t, "the stale entry removed once the remotes synced", func() bool {
		_, ok := f.IPCacheMap()[stale]
		return !ok
	})
}
