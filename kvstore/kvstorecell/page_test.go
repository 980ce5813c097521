package kvstorecell_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestListPagesAgainstRealEtcd pages through a prefix with
// GET /v1/kvstore (one etcd range request a page), writing a key behind
// and one ahead of the listing and deleting the next key between pages:
// the pages are bounded and in order, every key that exists throughout
// comes once, the key written ahead comes, the deleted one does not.
func TestListPagesAgainstRealEtcd(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	cl, kv := startAgent(t, "kvstore=etcd", "kvstore-opt=etcd.address="+srv.Endpoint(), "kvstore-heartbeat-writer=false")
	ctx := context.Background()
	const prefix = "cilium/state/test/v1/"
	key := func(i int) string { return fmt.Sprintf("%sk%03d", prefix, i) }
	for i := 0; i < 60; i += 2 {
		must(t, kv.Update(ctx, key(i), []byte("v"), false))
	}
	must(t, kv.Update(ctx, "cilium/state/tesu", []byte("outside"), false))

	var got []string
	var deleted, added []string
	for page, err := range cl.KVStorePages(ctx, prefix, client.ListOptions{Limit: 4}) {
		must(t, err)
		if len(page.Items) == 0 || len(page.Items) > 4 {
			t.Fatalf("page of %d keys, want 1 to 4", len(page.Items))
		}
		for _, p := range page.Items {
			got = append(got, p.Key)
		}
		if page.Continue == "" {
			continue
		}
		var last int
		_, _ = fmt.Sscanf(strings.TrimPrefix(page.Items[len(page.Items)-1].Key, prefix), "k%d", &last)
		// Behind the listing: not listed. Ahead of it: listed. The next
		// existing key, deleted: not listed.
		must(t, kv.Update(ctx, key(last-1), []byte("late"), false))
		if last+3 < 60 {
			must(t, kv.Update(ctx, key(last+3), []byte("ahead"), false))
			added = append(added, key(last+3))
		}
		if last+2 < 60 {
			must(t, kv.Delete(ctx, key(last+2)))
			deleted = append(deleted, key(last+2))
		}
	}
	var want []string
	for i := 0; i < 60; i += 2 {
		if !slices.Contains(deleted, key(i)) {
			want = append(want, key(i))
		}
	}
	want = append(want, added...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("paged keys =\n%v\nwant\n%v", got, want)
	}

	all, err := cl.KVStoreList(ctx, "")
	must(t, err)
	if len(all) < len(want)+1 || !slices.IsSortedFunc(all, func(a, b models.KVPair) int { return strings.Compare(a.Key, b.Key) }) {
		t.Errorf("list of every key: %d keys, want at least %d, sorted", len(all), len(want)+1)
	}
}

// TestListPrefixPageWithoutPager pages a backend that can only list a
// whole prefix (the in-memory test backend).
func TestListPrefixPageWithoutPager(t *testing.T) {
	b := kvstoretest.NewMemory().NewBackend()
	defer b.Close()
	ctx := context.Background()
	for _, k := range []string{"p/a", "p/b", "p/c", "q/a"} {
		must(t, b.Update(ctx, k, []byte(k), false))
	}
	page, more, err := kvstore.ListPrefixPage(ctx, b, "p/", "p/a", 1)
	must(t, err)
	if len(page) != 1 || page[0].Key != "p/b" || !more {
		t.Errorf("page after p/a = %+v more=%v, want p/b and more", page, more)
	}
	page, more, err = kvstore.ListPrefixPage(ctx, b, "p/", "p/b", 5)
	must(t, err)
	if len(page) != 1 || page[0].Key != "p/c" || more {
		t.Errorf("page after p/b = %+v more=%v, want p/c and no more", page, more)
	}
}
