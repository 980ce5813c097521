package nodecell_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/datapath/node/nodecell"
	"github.com/apiary-net/apiary/policy/source"
)

// TestNodeListPages lists nodes of two clusters through GET /v1/node in
// pages of 3, deleting the last node of each page before asking for the
// next: the pages are bounded, in (cluster, name) order, name the local
// cluster, and hold every node that exists throughout exactly once.
func TestNodeListPages(t *testing.T) {
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	var m node.Manager
	celltest.StartWithFlags(t, append(slices.Clone(localFlags), "socket-path="+socket),
		testCells(noAllocator{}), nodecell.Cell, api.Cell, celltest.Capture(&m))
	for i := range 10 {
		for _, cluster := range []string{"default", "c2"} {
			n := remote(fmt.Sprintf("node-%02d", i), fmt.Sprintf("192.0.%d.%d", 2+len(cluster), 20+i))
			n.Cluster, n.Source = cluster, source.KVStore
			m.NodeUpdated(n)
		}
	}
	c := client.New(socket)
	defer c.Close()
	var got, deleted []string
	for page, err := range c.NodePages(context.Background(), client.ListOptions{Limit: 3}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) == 0 || len(page.Items) > 3 || page.LocalCluster != "default" {
			t.Fatalf("page of %d nodes, local cluster %q, want 1 to 3 and default", len(page.Items), page.LocalCluster)
		}
		for _, n := range page.Items {
			got = append(got, n.Cluster+"/"+n.Name)
		}
		if page.Continue != "" {
			last := page.Items[len(page.Items)-1]
			m.NodeDeleted(node.Node{Name: last.Name, Cluster: last.Cluster, Source: source.KVStore})
			deleted = append(deleted, last.Cluster+"/"+last.Name)
		}
	}
	var want []string
	for _, n := range m.Nodes() {
		want = append(want, n.GetKeyName())
	}
	want = append(want, deleted...)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("paged nodes =\n%v\nwant\n%v", got, want)
	}
}
