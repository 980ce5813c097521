package cmbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"golang.org/x/sync/errgroup"

	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/hack/bench/benchagent"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/ipcache"
)

// PeerRead is what a hand-written reader does: for each of the three
// prefixes (concurrently, as apiary's three watchers run), a paginated
// client/v3 Get at one revision and the decode of every value into the
// same Go types apiary uses (node.Node, ipcache.IPIdentityPair,
// identity.Identity), kept in maps.
func PeerRead(ctx context.Context, c *clientv3.Client, s Size) (time.Duration, error) {
	remoteInfo := benchagent.Local
	remoteInfo.ClusterName, remoteInfo.ClusterID = RemoteName, RemoteID
	nodes := map[string]*node.Node{}
	pairs := map[string]*ipcache.IPIdentityPair{}
	ids := map[uint64]*identity.Identity{}
	begin := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return list(gctx, c, layout.NodesClusterPrefix(RemoteName)+"/", func(name string, v []byte) error {
			var n node.Node
			if err := n.UnmarshalJSON(v); err != nil {
				return err
			}
			nodes[name] = &n
			return nil
		})
	})
	g.Go(func() error {
		return list(gctx, c, layout.IPDefaultPrefix+"/", func(name string, v []byte) error {
			p, err := ipcache.DecodeIPIdentityPair(name, v)
			pairs[name] = p
			return err
		})
	})
	g.Go(func() error {
		return list(gctx, c, layout.IdentitiesIDPrefix+"/", func(name string, v []byte) error {
			id, err := strconv.ParseUint(name, 10, 32)
			if err != nil {
				return err
			}
			ident, err := identitycache.DecodeKVStoreIdentity(remoteInfo, id, string(v))
			ids[id] = ident
			return err
		})
	})
	if err := g.Wait(); err != nil {
		return 0, err
	}
	took := time.Since(begin)
	if len(nodes) != s.Nodes || len(pairs) != s.Endpoints || len(ids) != s.Identities {
		return 0, fmt.Errorf("peer read %d nodes, %d ipcache entries, %d identities; want %d, %d, %d",
			len(nodes), len(pairs), len(ids), s.Nodes, s.Endpoints, s.Identities)
	}
	return took, nil
}

// list reads prefix in pages of 1,000 at the revision of the first page.
func list(ctx context.Context, c *clientv3.Client, prefix string, decode func(name string, v []byte) error) error {
	from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(1000)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := c.Get(ctx, from, opts...)
		if err != nil {
			return fmt.Errorf("list %s: %w", prefix, err)
		}
		rev = resp.Header.Revision
		for _, kv := range resp.Kvs {
			name := strings.TrimPrefix(string(kv.Key), prefix)
			if err := decode(name, kv.Value); err != nil {
				return fmt.Errorf("decode %s: %w", kv.Key, err)
			}
		}
		if !resp.More {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
