package ipcache

import (
	"context"
	"fmt"
)

// markInitialSync records that the cluster's entries are in the cache
// (the kvstore watcher listed them, or there is no kvstore): the
// revision handed out last holds them.
func (c *Cache) markInitialSync() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.initialSync:
		return
	default:
	}
	c.initialRev = c.queued
	close(c.initialSync)
}

// WaitForInitialSync implements IPCache.
func (c *Cache) WaitForInitialSync(ctx context.Context) error {
	select {
	case <-c.initialSync:
	case <-ctx.Done():
		return fmt.Errorf("wait for the ipcache's initial sync: %w", context.Cause(ctx))
	}
	c.mu.Lock()
	rev := c.initialRev
	c.mu.Unlock()
	return c.WaitForRevision(ctx, rev)
}
