// Command apiaryside is meshbench's apiary process: the part of an
// apiary agent a remote cluster feeds (kvstore client, node manager,
// ipcache with one listener, identity cache, controllers and the
// remote connection of clustermesh/remote), composed from their cells as
// the agent composes them and as cmbench does. It connects to the remote
// given by -etcd-config and reports ready (see package side) once the
// remote is synced and every node, identity and ipcache entry of it is
// held, timed from the hive's start.
package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/clustermesh/remote"
	"github.com/apiary-net/apiary/hack/bench/benchagent"
	"github.com/apiary-net/apiary/hack/bench/meshbench/side"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
)

func main() {
	cfgFile := flag.String("etcd-config", "", "the remote cluster's etcd config file")
	remoteName := flag.String("remote", "cluster2", "the remote cluster's name")
	remoteID := flag.Int("remote-id", 2, "the remote cluster's id (its identities are <id><<16 | 256+i)")
	nodes := flag.Int("nodes", 0, "remote nodes to wait for")
	ids := flag.Int("identities", 0, "remote identities to wait for")
	endpoints := flag.Int("endpoints", 0, "remote ipcache entries to wait for")
	memProfile := flag.String("memprofile", "", "write a heap profile (after ready and a GC) to this file")
	flag.Parse()
	cfg, err := kvstore.ReadEtcdConfig(*cfgFile)
	if err != nil {
		side.Fail("apiaryside", err)
	}
	w := want{name: *remoteName, id: *remoteID, nodes: *nodes, identities: *ids, endpoints: *endpoints}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	begin := time.Now()
	a, err := benchagent.Start(ctx, func(ipcache.Revision, []ipcache.Change) {})
	if err != nil {
		side.Fail("apiaryside", err)
	}
	c := a.Connect(w.name, cfg)
	if err := wait(ctx, a, c, w); err != nil {
		side.Fail("apiaryside", err)
	}
	ready := time.Since(begin)
	if err := check(a, w); err != nil {
		side.Fail("apiaryside", err)
	}
	side.Serve(ready, *memProfile)
	stop, cancelStop := context.WithTimeout(context.Background(), time.Minute)
	defer cancelStop()
	_ = a.Hive.Stop(stop)
}

// want is what the remote holds.
type want struct {
	name                         string
	id                           int
	nodes, identities, endpoints int
}

// wait returns once the remote is synced and the node manager and
// ipcache hold all of it (each remote pod and each remote node address
// is an ipcache entry).
func wait(ctx context.Context, a *benchagent.Agent, c *remote.Cluster, w want) error {
	wantLen := a.IPCache.Len() + w.endpoints + w.nodes
	if err := c.WaitSynced(ctx); err != nil {
		return fmt.Errorf("wait for %s synced: %w", w.name, err)
	}
	// The ipcache count is cheap; the node count copies every node, so
	// it is polled only once the ipcache is complete, to keep the
	// benchmark's own garbage out of the heap it measures.
	for a.IPCache.Len() < wantLen {
		if ctx.Err() != nil {
			return fmt.Errorf("ipcache holds %d entries, want %d: %w", a.IPCache.Len(), wantLen, ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	for a.CountNodes(w.name) < w.nodes {
		if ctx.Err() != nil {
			return fmt.Errorf("node manager holds %d nodes of %s, want %d: %w", a.CountNodes(w.name), w.name, w.nodes, ctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// check verifies that every identity of the remote arrived (numbered
// as cmbench.Fill numbers them).
func check(a *benchagent.Agent, w want) error {
	for i := range w.identities {
		id := identity.NumericIdentity(w.id<<16 | (256 + i))
		if a.Alloc.LookupIdentityByID(id) == nil {
			return fmt.Errorf("identity %d missing", id)
		}
	}
	if n := a.CountNodes(w.name); n != w.nodes {
		return fmt.Errorf("%d nodes of %s, want %d", n, w.name, w.nodes)
	}
	return nil
}
