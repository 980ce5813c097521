package cmbench

import (
	"context"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/hack/bench"
	"github.com/apiary-net/apiary/hack/bench/benchagent"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// ApiaryRead starts a fresh agent (not timed), then times from the
// remote connection's start (what a new config file triggers, without
// the config directory's debounce) until the remote is ready and the
// node manager, ipcache and identity cache hold every entry of it. It
// checks every entry afterwards (not timed).
// ready is the part until the remote reported ready (every prefix
// listed into its watch store).
// cpu is the process's CPU time during the timed part.
func ApiaryRead(ctx context.Context, cfg *kvstore.EtcdConfig, s Size) (took, ready, cpu time.Duration, err error) {
	a, err := benchagent.Start(ctx, func(ipcache.Revision, []ipcache.Change) {})
	if err != nil {
		return 0, 0, 0, err
	}
	defer a.Stop()
	before := a.IPCache.Len()
	// Each remote pod and each remote node address becomes an entry.
	wantLen := before + s.Endpoints + s.Nodes
	cpu0 := bench.ProcessCPU()
	begin := time.Now()
	c := a.Connect(RemoteName, cfg)
	if err := c.WaitSynced(ctx); err != nil {
		return 0, 0, 0, fmt.Errorf("wait for %s synced: %w", RemoteName, err)
	}
	ready = time.Since(begin)
	for a.IPCache.Len() < wantLen || a.CountNodes(RemoteName) < s.Nodes {
		if ctx.Err() != nil {
			return 0, 0, 0, fmt.Errorf("ipcache holds %d entries, want %d: %w", a.IPCache.Len(), wantLen, ctx.Err())
		}
		time.Sleep(200 * time.Microsecond)
	}
	took, cpu = time.Since(begin), bench.ProcessCPU()-cpu0
	return took, ready, cpu, check(a, s)
}

// check verifies that every entry of the remote arrived, with its identity.
func check(a *benchagent.Agent, s Size) error {
	for i := range s.Endpoints {
		e, ok := a.IPCache.Lookup(endpointPrefix(i))
		if !ok || e.Identity != identityOf(i%s.Identities) {
			return fmt.Errorf("ipcache entry %s = %+v (present %t), want identity %d", endpointPrefix(i), e, ok, identityOf(i%s.Identities))
		}
	}
	for i := range s.Identities {
		if a.Alloc.LookupIdentityByID(identityOf(i)) == nil {
			return fmt.Errorf("identity %d missing", identityOf(i))
		}
	}
	if n := a.CountNodes(RemoteName); n != s.Nodes {
		return fmt.Errorf("%d nodes of %s, want %d", n, RemoteName, s.Nodes)
	}
	return nil
}
