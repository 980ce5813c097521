package service

import (
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/cells/api/models"
)

// Cache is the global service cache: per namespace/name, the service of
// every remote cluster that shares it. A cluster's service counts only
// when Shared is set (Cilium's rule: its writers set Shared for a global
// service unless service.cilium.io/shared is "false"); an update that is
// no longer shared withdraws that cluster's part.
type Cache struct {
	mu       sync.Mutex
	services map[string]map[string]*ClusterService // namespace/name -> cluster -> service
	subs     []func(namespacedName string)
	notifyMu sync.Mutex // serialises the delivery of changes
}

// Subscribe calls fn with the namespace/name of every change, after it,
// in order (the service manager's feed of remote backends). fn must not
// change the cache. Subscribe before the cache is fed.
func (c *Cache) Subscribe(fn func(namespacedName string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.subs = append(c.subs, fn)
}

// Get returns the clusters' parts of the global service namespacedName,
// sorted by cluster name.
func (c *Cache) Get(namespacedName string) []*ClusterService {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := slices.Collect(maps.Values(c.services[namespacedName]))
	slices.SortFunc(out, func(a, b *ClusterService) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out
}

// ClusterNames maps the ids of the clusters in the cache to their names.
func (c *Cache) ClusterNames() map[uint32]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[uint32]string{}
	for _, byCluster := range c.services {
		for _, s := range byCluster {
			out[s.ClusterID] = s.Cluster
		}
	}
	return out
}

// change runs fn under the lock, then tells the subscribers of the
// namespace/names it returns.
func (c *Cache) change(fn func() []string) {
	c.notifyMu.Lock()
	defer c.notifyMu.Unlock()
	c.mu.Lock()
	changed := fn()
	subs := slices.Clone(c.subs)
	c.mu.Unlock()
	for _, nn := range changed {
		for _, sub := range subs {
			sub(nn)
		}
	}
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{services: map[string]map[string]*ClusterService{}}
}

// Upsert puts a cluster's service in the cache, or withdraws the
// cluster's part when the service is not shared.
func (c *Cache) Upsert(s *ClusterService) {
	if !s.Shared {
		c.Delete(s.Cluster, s.NamespacedName())
		return
	}
	c.UpsertLocal(s)
}

// UpsertLocal puts a global service of the local cluster in the cache,
// shared or not: its local backends serve this cluster either way;
// Shared only says whether they are published for the remote ones.
func (c *Cache) UpsertLocal(s *ClusterService) {
	c.change(func() []string {
		byCluster := c.services[s.NamespacedName()]
		if byCluster == nil {
			byCluster = map[string]*ClusterService{}
			c.services[s.NamespacedName()] = byCluster
		}
		byCluster[s.Cluster] = s
		return []string{s.NamespacedName()}
	})
}

// Delete withdraws cluster's part of the service namespacedName.
func (c *Cache) Delete(cluster, namespacedName string) {
	c.change(func() []string {
		byCluster, ok := c.services[namespacedName]
		if _, had := byCluster[cluster]; !ok || !had {
			return nil
		}
		delete(byCluster, cluster)
		if len(byCluster) == 0 {
			delete(c.services, namespacedName)
		}
		return []string{namespacedName}
	})
}

// Drain withdraws every part of cluster (a remote removed).
func (c *Cache) Drain(cluster string) {
	c.change(func() []string {
		var changed []string
		for nn, byCluster := range c.services {
			if _, ok := byCluster[cluster]; !ok {
				continue
			}
			changed = append(changed, nn)
			delete(byCluster, cluster)
			if len(byCluster) == 0 {
				delete(c.services, nn)
			}
		}
		slices.Sort(changed)
		return changed
	})
}

// Len is the number of global services: the namespace/names at least
// one cluster shares.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.services)
}

// List returns the merged view, sorted by namespace/name, each with its
// clusters sorted by name.
func (c *Cache) List() []models.GlobalService {
	out, _ := c.ListAfter("", -1)
	return out
}

// ListAfter returns at most limit global services (all when limit < 0)
// whose namespace/name sorts after the given one, and whether more
// follow: a page of GET /v1/service.
func (c *Cache) ListAfter(after string, limit int) ([]models.GlobalService, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.services))
	for nn := range c.services {
		if nn > after {
			names = append(names, nn)
		}
	}
	slices.Sort(names)
	more := limit >= 0 && len(names) > limit
	if more {
		names = names[:limit]
	}
	out := make([]models.GlobalService, 0, len(names))
	for _, nn := range names {
		out = append(out, merged(c.services[nn]))
	}
	return out, more
}

// merged is one global service: every sharing cluster's part.
func merged(byCluster map[string]*ClusterService) models.GlobalService {
	var g models.GlobalService
	for _, s := range byCluster {
		g.Namespace, g.Name = s.Namespace, s.Name
		g.Clusters = append(g.Clusters, models.ServiceCluster{Cluster: s.Cluster, ClusterID: s.ClusterID,
			Frontends: addresses(s.Frontends), Backends: addresses(s.Backends)})
	}
	slices.SortFunc(g.Clusters, func(a, b models.ServiceCluster) int { return strings.Compare(a.Cluster, b.Cluster) })
	return g
}

// addresses renders "<ip>:<port>/<protocol>" with " (<name>)" for named
// ports, sorted.
func addresses(m map[string]PortConfiguration) []string {
	out := []string{}
	for ip, ports := range m {
		addr, _ := netip.ParseAddr(ip) // checked by Decode
		for name, p := range ports {
			s := netip.AddrPortFrom(addr, p.Port).String() + "/" + p.Protocol
			if name != "" {
				s += " (" + name + ")"
			}
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}
