package cmbench

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"

	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// Remote cluster name and id the benchmark fills in.
const (
	RemoteName = "cluster2"
	RemoteID   = 2
)

// Size is how much the remote cluster holds.
type Size struct {
	Nodes, Identities, Endpoints int
}

// Full is the benchmark's remote: 5,000 nodes, 50,000 identities, 100,000
// ipcache entries.
var Full = Size{Nodes: 5000, Identities: 50000, Endpoints: 100000}

// Keys returns the number of keys read (without canaries and config).
func (s Size) Keys() int { return s.Nodes + s.Identities + s.Endpoints }

// identityOf returns the i-th identity of the remote cluster.
func identityOf(i int) identity.NumericIdentity {
	return identity.NumericIdentity(RemoteID<<16 | (256 + i))
}

// endpointPrefix returns the i-th pod address (10.200.0.0/14 and up).
func endpointPrefix(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(200 + i>>16), byte(i >> 8), byte(i)}), 32)
}

// nodeIP returns the address of the n-th node (100.64.0.0/16 and up).
func nodeIP(n int) netip.Addr {
	return netip.AddrFrom4([4]byte{100, 64 + byte(n>>16), byte(n >> 8), byte(n)})
}

func nodeKV(n int) (string, []byte, error) {
	nd := node.Node{Name: fmt.Sprintf("node-%05d", n), Cluster: RemoteName, ClusterID: RemoteID,
		IPAddresses:   []node.Address{{Type: node.NodeInternalIP, IP: nodeIP(n)}},
		IPv4AllocCIDR: netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16 + byte(n>>8), byte(n), 0}), 24),
		Labels:        map[string]string{"kubernetes.io/hostname": fmt.Sprintf("node-%05d", n)},
	}
	v, err := nd.MarshalJSON()
	return layout.NodeKey(RemoteName, nd.Name), v, err
}

func identityKV(i int) (string, []byte) {
	lbls := labels.FromSlice([]labels.Label{
		labels.MustParse(fmt.Sprintf("k8s:app=app-%d", i)),
		labels.MustParse(fmt.Sprintf("k8s:%s=ns-%d", labels.KeyPodNamespace, i%100)),
		labels.MustParse(fmt.Sprintf("k8s:%s=%s", labels.KeyPolicyCluster, RemoteName)),
		labels.MustParse("k8s:io.cilium.k8s.policy.serviceaccount=default"),
	})
	return layout.IdentityKey(uint32(identityOf(i))), []byte(lbls.SortedList())
}

// endpointKV returns the i-th ipcache entry; ids numbers its versions
// (the steady-state writer changes the host).
func endpointKV(s Size, i, version int) (string, []byte, error) {
	p := endpointPrefix(i)
	pair := ipcache.NewIPIdentityPair(p, identityOf(i%s.Identities), nodeIP((i+version)%s.Nodes))
	pair.K8sNamespace, pair.K8sPodName = fmt.Sprintf("ns-%d", i%s.Identities%100), fmt.Sprintf("pod-%d", i)
	pair.Metadata = fmt.Sprintf("cilium-global:%s:node-%05d:%d", RemoteName, i%s.Nodes, i)
	pair.NamedPorts = []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: "TCP"}}
	v, err := pair.Marshal()
	return layout.IPKey(layout.DefaultAddressSpace, p.Addr().String()), v, err
}

// Fill writes the remote cluster into the etcd of c in batched
// transactions: every entry, then the cluster config and the sync
// canaries, as a remote's writers leave it.
func Fill(ctx context.Context, c *clientv3.Client, s Size) error {
	const batch = 100 // below etcd's default --max-txn-ops 128
	var ops []clientv3.Op
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	flush := func() {
		if len(ops) == 0 {
			return
		}
		txn := ops
		ops = nil
		g.Go(func() error {
			if _, err := c.Txn(gctx).Then(txn...).Commit(); err != nil {
				return fmt.Errorf("fill remote: %w", err)
			}
			return nil
		})
	}
	put := func(k string, v []byte) {
		ops = append(ops, clientv3.OpPut(k, string(v)))
		if len(ops) == batch {
			flush()
		}
	}
	for n := range s.Nodes {
		k, v, err := nodeKV(n)
		if err != nil {
			return err
		}
		put(k, v)
	}
	for i := range s.Identities {
		put(identityKV(i))
	}
	for i := range s.Endpoints {
		k, v, err := endpointKV(s, i, 0)
		if err != nil {
			return err
		}
		put(k, v)
	}
	put(layout.ClusterConfigKey(RemoteName),
		fmt.Appendf(nil, `{"id":%d,"capabilities":{"syncedCanaries":true,"maxConnectedClusters":255}}`, RemoteID))
	flush()
	if err := g.Wait(); err != nil {
		return err
	}
	// The canaries go last, once every entry is written, as a remote's
	// writers put them.
	now := time.Now().UTC().Format(time.RFC3339)
	canaries := []clientv3.Op{clientv3.OpPut(layout.HeartbeatKey, time.Now().String())}
	for _, p := range []string{layout.CanaryNodes, layout.CanaryIPCache, layout.CanaryIdentities, layout.CanaryServices} {
		canaries = append(canaries, clientv3.OpPut(layout.SyncedKey(RemoteName, p), now))
	}
	if _, err := c.Txn(ctx).Then(canaries...).Commit(); err != nil {
		return fmt.Errorf("write sync canaries: %w", err)
	}
	return nil
}
