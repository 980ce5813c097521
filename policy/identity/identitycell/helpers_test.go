package identitycell_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

// agent is a hive with the identity cell, the kvstore cell, the API
// server and the status collector, as one node of a cluster.
type agent struct {
	alloc    identity.Allocator
	client   *client.Client
	hive     *hive.Hive
	observer *recorder
}

type agentConfig struct {
	srv   *kvstoretest.Server // nil: standalone mode
	ip    string              // --node-ip ("": the host's address)
	flags []string
	extra []cell.Cell
}

// newAgent populates an agent's hive; start it with start.
func newAgent(t *testing.T, c agentConfig) *agent {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	flags := append([]string{"socket-path=" + socket, "kvstore-heartbeat-writer=false", "node-name=node-a"}, c.flags...)
	if c.srv != nil {
		flags = append(flags, "kvstore=etcd", "kvstore-opt=etcd.address="+c.srv.Endpoint())
	}
	a := &agent{observer: &recorder{}, client: client.New(socket)}
	t.Cleanup(a.client.Close)
	cells := []cell.Cell{api.Cell, status.Cell, kvstorecell.Cell, localnode.Cell, identitycell.Cell,
		cell.Provide(func() identitycache.ObserverOut { return identitycache.ObserverOut{Observer: a.observer} }),
		celltest.Capture(&a.alloc)}
	if c.ip != "" {
		flags = append(flags, "node-ip="+c.ip)
	}
	a.hive = celltest.New(t, flags, append(cells, c.extra...)...)
	return a
}

// startAgent starts an agent until the test ends.
func startAgent(t *testing.T, c agentConfig) *agent {
	t.Helper()
	a := newAgent(t, c)
	must(t, a.hive.Start(context.Background()))
	t.Cleanup(func() {
		if err := a.hive.Stop(context.Background()); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	if c.srv != nil {
		must(t, a.alloc.WaitForInitialGlobalIdentities(ctxFor(t)))
	}
	return a
}

// recorder is an identity observer.
type recorder struct {
	mu      sync.Mutex
	batches [][]identity.Change
}

func (r *recorder) OnIdentitiesChanged(changes []identity.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.batches = append(r.batches, slices.Clone(changes))
}

// events returns "+<id>" and "-<id>" for every change so far.
func (r *recorder) events() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, b := range r.batches {
		for _, c := range b {
			sign := "+"
			if c.Kind == identity.Deleted {
				sign = "-"
			}
			out = append(out, fmt.Sprintf("%s%d", sign, c.Identity.ID))
		}
	}
	return out
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// statusLine waits for an "Identities" line that ok accepts.
func statusLine(t *testing.T, c *client.Client, ok func(models.StatusEntry) bool) models.StatusEntry {
	t.Helper()
	var last models.StatusEntry
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		st, err := c.Status(context.Background())
		must(t, err)
		for _, e := range st.Entries {
			if e.Name == "Identities" {
				last = e
				if ok(e) {
					return e
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no matching Identities line; last: %+v", last)
	return last
}

// get reads a key from etcd ("" when missing).
func get(t *testing.T, srv *kvstoretest.Server, key string) string {
	t.Helper()
	resp, err := srv.Client().Get(ctxFor(t), key)
	must(t, err)
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func pod(app string) labels.Labels {
	return labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app", app),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
	})
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }
