package identitycell_test

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
)

// TestNodeIPFallback: without --node-ip, references name the host's
// first global unicast address, IPv4 first.
func TestNodeIPFallback(t *testing.T) {
	var v4, v6 []netip.Addr
	addrs, err := net.InterfaceAddrs()
	must(t, err)
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap().IsGlobalUnicast() {
				if ip = ip.Unmap(); ip.Is4() {
					v4 = append(v4, ip)
				} else {
					v6 = append(v6, ip)
				}
			}
		}
	}
	want := append(v4, v6...)
	if len(want) == 0 {
		t.Skip("this machine has no global unicast address to fall back on")
	}
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, agentConfig{srv: srv})
	id, _, err := a.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	_, ref := identitycache.KVStoreEntries(id.ID, id.Labels, want[0].String())
	if got := get(t, srv, ref.Key); got != id.ID.String() {
		resp, _ := srv.Client().Get(ctxFor(t), strings.TrimSuffix(ref.Key, want[0].String()), clientv3.WithPrefix())
		var keys []string
		for _, kv := range resp.Kvs {
			keys = append(keys, string(kv.Key))
		}
		t.Errorf("no reference named %s (the first global unicast address); references: %q", want[0], keys)
	}
}
