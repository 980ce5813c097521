package clustermesh

import (
	"fmt"
	"slices"
	"sync"

	"github.com/apiary-net/apiary/clustermesh/remote"
)

// idClaims implements remote.IDClaims.
type idClaims struct {
	mu        sync.Mutex
	holders   map[uint32]string
	conflicts map[string][]string // cluster -> clusters it conflicts with
}

var _ remote.IDClaims = (*idClaims)(nil)

func newIDClaims() *idClaims {
	return &idClaims{holders: map[uint32]string{}, conflicts: map[string][]string{}}
}

func (c *idClaims) Claim(cluster string, id uint32) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked(cluster)
	if holder, ok := c.holders[id]; ok && holder != cluster {
		c.addConflictLocked(cluster, holder)
		c.addConflictLocked(holder, cluster)
		return fmt.Errorf("cluster id %d is already used by connected remote cluster %q", id, holder)
	}
	c.holders[id] = cluster
	return nil
}

func (c *idClaims) addConflictLocked(a, b string) {
	if !slices.Contains(c.conflicts[a], b) {
		c.conflicts[a] = append(c.conflicts[a], b)
	}
}

func (c *idClaims) Release(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked(cluster)
	for other, list := range c.conflicts {
		c.conflicts[other] = slices.DeleteFunc(list, func(s string) bool { return s == cluster })
	}
	delete(c.conflicts, cluster)
}

func (c *idClaims) releaseLocked(cluster string) {
	for id, holder := range c.holders {
		if holder == cluster {
			delete(c.holders, id)
		}
	}
}

func (c *idClaims) Conflicts(cluster string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.conflicts[cluster])
}
