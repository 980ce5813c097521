package interop

import (
	"context"
	"testing"

	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"
	identitycache "github.com/cilium/cilium/pkg/identity/cache"
	identitykey "github.com/cilium/cilium/pkg/identity/key"
	"github.com/cilium/cilium/pkg/idpool"
	ciliumipcache "github.com/cilium/cilium/pkg/ipcache"
	"github.com/cilium/cilium/pkg/kvstore"
	kvstoreallocator "github.com/cilium/cilium/pkg/kvstore/allocator"
	ciliumlabels "github.com/cilium/cilium/pkg/labels"
	nodestore "github.com/cilium/cilium/pkg/node/store"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
)

// TestLayoutIsCiliums compares apiary's kvstore/layout with Cilium's own
// constants, and its key builders with the keys Cilium's own writers put
// (clustercfg.Set, the SyncStores of clustermesh-apiserver, the kvstore
// identity allocator): a Cilium upgrade that moves a key fails here.
func TestLayoutIsCiliums(t *testing.T) {
	t.Run("constants", func(t *testing.T) {
		for _, tt := range []struct{ name, give, want string }{
			{"base", layout.BasePrefix, kvstore.BaseKeyPrefix},
			{"state", layout.StatePrefix, kvstore.StatePrefix},
			{"cache", layout.CachePrefix, kvstore.CachePrefix},
			{"heartbeat", layout.HeartbeatKey, kvstore.HeartbeatPath},
			{"cluster config", layout.ClusterConfigPrefix, kvstore.ClusterConfigPrefix},
			{"synced", layout.SyncedPrefix, kvstore.SyncedPrefix},
			{"nodes", layout.NodesPrefix, nodestore.NodeStorePrefix},
			{"ip", layout.IPPrefix, ciliumipcache.IPIdentitiesPath},
			{"address space", layout.DefaultAddressSpace, ciliumipcache.DefaultAddressSpace},
			{"ip default space", layout.IPDefaultPrefix, kvstore.JoinKey(ciliumipcache.IPIdentitiesPath, ciliumipcache.AddressSpace)},
			{"identities", layout.IdentitiesPrefix, identitycache.IdentitiesPath},
			{"services", layout.ServicesPrefix, cmstore.ServiceStorePrefix},
			{"cached nodes", layout.StateToCache(layout.NodesPrefix), kvstore.StateToCachePrefix(nodestore.NodeStorePrefix)},
			{"cached ip", layout.StateToCache(layout.IPPrefix), kvstore.StateToCachePrefix(ciliumipcache.IPIdentitiesPath)},
			{"cached identities", layout.StateToCache(layout.IdentitiesPrefix), kvstore.StateToCachePrefix(identitycache.IdentitiesPath)},
			{"cached services", layout.StateToCache(layout.ServicesPrefix), kvstore.StateToCachePrefix(cmstore.ServiceStorePrefix)},
			{"synced of a cluster", layout.SyncedClusterPrefix("c1"), kvstore.JoinKey(kvstore.SyncedPrefix, "c1")},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.give != tt.want {
					t.Errorf("apiary %q, Cilium %q", tt.give, tt.want)
				}
			})
		}
	})

	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	t.Run("keys of Cilium's writers", func(t *testing.T) {
		c := ExampleCiliumCluster("cilium1", 2)
		PublishCiliumCluster(t, srv, c)
		keys := map[string]string{"cluster config": layout.ClusterConfigKey(c.Name)}
		for _, canary := range []string{layout.CanaryNodes, layout.CanaryIPCache, layout.CanaryIdentities, layout.CanaryServices} {
			keys["canary "+canary] = layout.SyncedKey(c.Name, canary)
		}
		for _, n := range c.Nodes {
			keys["node "+n.Name] = layout.NodeKey(c.Name, n.Name)
		}
		for _, e := range c.Endpoints {
			keys["ipcache "+e.IP.String()] = layout.IPKey(layout.DefaultAddressSpace, e.IP.String())
		}
		for id := range c.Identities {
			keys["identity "+id.String()] = layout.IdentityKey(uint32(id))
		}
		for _, s := range c.Services {
			keys["service "+s.Name] = layout.ServiceKey(c.Name, s.Namespace, s.Name)
		}
		for name, key := range keys {
			t.Run(name, func(t *testing.T) {
				if n := count(t, raw, key, false); n != 1 {
					t.Errorf("Cilium's writers put no %s", key)
				}
			})
		}
	})

	t.Run("identity allocator", func(t *testing.T) {
		log := celltest.Logger(t)
		ctx, cancel, client := ciliumClient(t, log, srv)
		defer func() { cancel(); client.Close() }()
		backend, err := kvstoreallocator.NewKVStoreBackend(log, kvstoreallocator.KVStoreBackendConfiguration{
			BasePath: identitycache.IdentitiesPath, Suffix: "192.0.2.7", Typ: &identitykey.GlobalIdentity{}, Backend: client})
		if err != nil {
			t.Fatal(err)
		}
		lbls := "k8s:app=web;k8s:io.kubernetes.pod.namespace=default;"
		key := &identitykey.GlobalIdentity{LabelArray: ciliumlabels.NewLabelArrayFromSortedList(lbls)}
		if key.GetKey() != lbls {
			t.Fatalf("Cilium's key of %q is %q", lbls, key.GetKey())
		}
		lock, err := backend.Lock(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if n := count(t, raw, layout.IdentitiesLocksPrefix+"/"+lbls+"/", true); n != 1 {
			t.Errorf("%d locks below %s/%s/, want Cilium's one", n, layout.IdentitiesLocksPrefix, lbls)
		}
		if err := lock.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := backend.UpdateKey(ctx, idpool.ID(65792), key, true); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{layout.IdentityKey(65792), layout.IdentityValueKey(lbls, "192.0.2.7")} {
			if n := count(t, raw, key, false); n != 1 {
				t.Errorf("Cilium's allocator put no %s", key)
			}
		}
	})
}

// count returns how many keys are key, or start with it when prefix.
func count(t *testing.T, c *clientv3.Client, key string, prefix bool) int64 {
	t.Helper()
	opts := []clientv3.OpOption{clientv3.WithCountOnly()}
	if prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	resp, err := c.Get(context.Background(), key, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}
