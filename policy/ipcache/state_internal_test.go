package ipcache

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/source"
)

// TestCompactStateMergesAsExpanded: a prefix whose one owner gives an
// identity keeps only that owner and its entry once committed, and
// whatever changes it next merges as if the owner's metadata had been
// kept: a second owner on top, its withdrawal, the first owner's.
func TestCompactStateMergesAsExpanded(t *testing.T) {
	c := newCache(slog.New(slog.DiscardHandler), nil, nil)
	p := netip.MustParsePrefix("10.0.0.1/32")
	peer := netip.MustParseAddr("192.0.2.1")
	kv := Metadata{Identity: 300, TunnelPeer: peer, EncryptKey: 2, K8sNamespace: "ns", K8sPodName: "pod",
		K8sServiceAccount: "sa", NamedPorts: []policyapi.NamedPort{{Name: "http", Port: 80, Protocol: "TCP"}}}
	apply := func(u Update) {
		t.Helper()
		u.Prefix = p
		if _, err := c.Apply(u); err != nil {
			t.Fatal(err)
		}
		if _, err := c.round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := func(step string, compact bool, e Entry) {
		t.Helper()
		st := c.prefixes[p]
		got, ok := c.Lookup(p)
		e.Prefix = p
		if st.compact() != compact || !ok || !sameEntry(&got, &e) || got.K8sServiceAccount != e.K8sServiceAccount {
			t.Errorf("%s: compact %t, entry %+v (present %t); want compact %t, %+v", step, st.compact(), got, ok, compact, e)
		}
	}
	fromKV := Entry{Identity: 300, Source: source.KVStore, TunnelPeer: peer, EncryptKey: 2, K8sNamespace: "ns",
		K8sPodName: "pod", K8sServiceAccount: "sa", NamedPorts: kv.NamedPorts}

	apply(Update{Source: source.KVStore, Resource: "kvstore/10.0.0.1", Metadata: kv})
	want("one owner", true, fromKV)

	apply(Update{Source: source.Local, Resource: "endpoint/10.0.0.1", Metadata: Metadata{TunnelPeer: netip.MustParseAddr("192.0.2.9")}})
	onTop := fromKV
	onTop.Source, onTop.TunnelPeer = source.Local, netip.MustParseAddr("192.0.2.9")
	want("a second owner on top", false, onTop)

	apply(Update{Source: source.Local, Resource: "endpoint/10.0.0.1", Remove: true})
	want("the second owner withdrawn", true, fromKV)

	apply(Update{Source: source.KVStore, Resource: "kvstore/10.0.0.1", Remove: true})
	if _, ok := c.Lookup(p); ok || len(c.prefixes) != 0 {
		t.Errorf("after the last owner left: entry present %t, %d prefix states; want none", ok, len(c.prefixes))
	}
}
