package ipcachecell_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// TestWaitForInitialSync checks that once WaitForInitialSync returns,
// the cluster's entries that were in the kvstore before the start are
// in the cache (the BPF ipcache map's full reconcile relies on it).
func TestWaitForInitialSync(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 50
	for i := range n {
		key := "cilium/state/ip/v1/default/10.0.2." + strconv.Itoa(i+1)
		val := `{"IP":"10.0.2.` + strconv.Itoa(i+1) + `","Mask":null,"HostIP":"192.0.2.20","ID":` + strconv.Itoa(2000+i) +
			`,"Key":0,"Metadata":"cilium-global:default:node-b:` + strconv.Itoa(i+1) + `"}`
		if _, err := srv.Client().Put(ctx, key, val); err != nil {
			t.Fatal(err)
		}
	}
	c, _, _ := startWithKVStore(t, srv, testNode)
	if err := c.WaitForInitialSync(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := entryOf(c, "10.0.2."+strconv.Itoa(i+1)+"/32"), strconv.Itoa(2000+i)+"/kvstore via 192.0.2.20"; got != want {
			t.Fatalf("entry of 10.0.2.%d right after the initial sync = %s, want %s", i+1, got, want)
		}
	}
}
