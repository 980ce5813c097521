package datapathtest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/policy"
)

func TestFakePolicyMap(t *testing.T) {
	f := datapathtest.New()
	f.PolicyMapMax = 2
	k1 := policy.Key{Identity: 1, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16}
	k2 := policy.Key{Identity: 2}
	k3 := policy.Key{Identity: 3, Direction: policy.Egress}
	if a, r, err := f.SyncPolicyMap(1, policy.MapState{k1: {}, k2: {}}); err != nil || a != 2 || r != 0 {
		t.Fatalf("first sync: added %d removed %d err %v, want 2 0 nil", a, r, err)
	}
	if a, r, err := f.SyncPolicyMap(1, policy.MapState{k1: {}, k3: {Deny: true}}); err != nil || a != 1 || r != 1 {
		t.Fatalf("second sync: added %d removed %d err %v, want 1 1 nil", a, r, err)
	}
	_, _, err := f.SyncPolicyMap(1, policy.MapState{k1: {}, k2: {}, k3: {}})
	if !errors.Is(err, datapath.ErrPolicyMapFull) {
		t.Fatalf("sync over the maximum: %v, want ErrPolicyMapFull", err)
	}
	if m, _ := f.PolicyMap(1); !m.Equal(policy.MapState{k1: {}, k3: {Deny: true}}) {
		t.Fatalf("refused sync changed the map: %v", m)
	}
}

func TestFakeFailNext(t *testing.T) {
	f := datapathtest.New()
	boom := errors.New("boom")
	f.FailNext("CreateEndpointLink", boom)
	spec := datapath.EndpointLinkSpec{ID: 7, NetNSPath: "/run/netns/x", IfName: "eth0"}
	if _, err := f.CreateEndpointLink(context.Background(), spec); !errors.Is(err, boom) {
		t.Fatalf("first create: %v, want boom", err)
	}
	if len(f.Links()) != 0 {
		t.Fatal("failed create left a link")
	}
	l, err := f.CreateEndpointLink(context.Background(), spec)
	if err != nil || l.IfName != "lxc7" {
		t.Fatalf("second create: %+v %v", l, err)
	}
	if _, err := f.LookupEndpointLink(context.Background(), 8); !errors.Is(err, datapath.ErrLinkNotFound) {
		t.Fatalf("lookup of a missing link: %v, want ErrLinkNotFound", err)
	}
	if got := len(f.Calls()); got != 3 {
		t.Fatalf("%d calls recorded, want 3: %v", got, f.Calls())
	}
}
