package ipcachetest

import (
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/apiary-net/apiary/policy/ipcache"
)

// applyTimeout bounds the wait for a revision.
const applyTimeout = 10 * time.Second

// Applied returns a function that checks the result of a change and
// waits until the cache has applied it: Applied(t, c)(c.UpsertMetadata(...)).
func Applied(t testing.TB, c ipcache.IPCache) func(ipcache.Revision, error) {
	return func(rev ipcache.Revision, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), applyTimeout)
		defer cancel()
		if err := c.WaitForRevision(ctx, rev); err != nil {
			t.Fatal(err)
		}
	}
}

// Settle waits until the cache has applied every change made so far.
func Settle(t testing.TB, c ipcache.IPCache) {
	t.Helper()
	Applied(t, c)(c.Apply())
}

// Describe formats an entry as "id/source[ via peer]", or "none" for nil.
func Describe(e *ipcache.Entry) string {
	if e == nil {
		return "none"
	}
	s := fmt.Sprintf("%d/%s", e.Identity, e.Source)
	if e.TunnelPeer.IsValid() {
		s += " via " + e.TunnelPeer.String()
	}
	return s
}

// EntryOf describes the entry of exactly prefix like Describe.
func EntryOf(c ipcache.IPCache, prefix netip.Prefix) string {
	e, ok := c.Lookup(prefix)
	if !ok {
		return "none"
	}
	return Describe(&e)
}
