package loader_test

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// TestTunnelServiceToNodeAddress is the shape of the `kubernetes`
// Service in tunnel routing: a ClusterIP whose backend is another node's
// own address (the API server on a control-plane node, a hostNetwork
// pod). A pod of node 1 connects to the ClusterIP: the request,
// translated to node 2's address (remote-node, tunnel peer node 2),
// goes through the tunnel; node 2's answer to the pod's address goes
// back through it (node 2's route to node 1's pod CIDR, as the
// node-routes handler writes it) and reaches the pod from the ClusterIP,
// so the handshake completes. The pod's egress policy is judged on the
// backend's identity: remote-node on 6443 is allowed, a second service
// to node 2's port 7777 is dropped as remote-node, not world.
func TestTunnelServiceToNodeAddress(t *testing.T) {
	ul := newUnderlay(t)
	n1 := newTunnelNode(t, ul, "node1", addr("192.168.78.1"))
	n2 := newTunnelNode(t, ul, "node2", addr("192.168.78.2"))
	a := &tunnelPod{id: 11, identity: 3101, ip: addr("10.2.1.10")}

	// As the node manager writes them: this node's address is host,
	// the other node's is remote-node with that node as tunnel peer, and
	// its pod CIDR a world entry with the same peer.
	n1.upsert(t, netip.Addr{}, map[string]identity.NumericIdentity{"10.2.1.10/32": a.identity, "192.168.78.1/32": identity.ReservedHost})
	n1.upsert(t, n2.ip, map[string]identity.NumericIdentity{"192.168.78.2/32": identity.ReservedRemoteNode, "10.2.2.0/24": identity.ReservedWorldIPv4})
	n2.upsert(t, netip.Addr{}, map[string]identity.NumericIdentity{"192.168.78.2/32": identity.ReservedHost})
	n2.upsert(t, n1.ip, map[string]identity.NumericIdentity{"192.168.78.1/32": identity.ReservedRemoteNode, "10.2.1.0/24": identity.ReservedWorldIPv4})
	if err := n2.links.UpsertNodeRoute(context.Background(), netip.MustParsePrefix("10.2.1.0/24"), n1.ip); err != nil {
		t.Fatal(err)
	}
	n1.addPod(t, a, addr("10.2.1.1"), netip.Addr{}, policy.MapState{
		key(identity.ReservedRemoteNode, policy.Egress, policy.ProtoTCP, 6443, 16): allow,
	})
	for _, port := range []int{6443, 7777} {
		stop, err := netnstest.Echo(n2.ns, n2.ip, port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}

	lb, err := lbmap.OpenWriter(testLogger(), n1.root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lb.Close() })
	apiserver := netip.MustParseAddr("10.96.0.1")
	other := netip.MustParseAddr("10.96.0.2")
	for _, s := range []struct {
		vip  netip.Addr
		port uint16
	}{{apiserver, 6443}, {other, 7777}} {
		if err := lb.UpsertService(datapath.LBService{
			Frontend: datapath.L3n4Addr{Addr: s.vip, Port: 443, Proto: datapath.ProtoTCP}, Type: datapath.SVCTypeClusterIP,
			Name: "default/kubernetes",
			Backends: []datapath.LBBackend{{Addr: datapath.L3n4Addr{Addr: n2.ip, Port: s.port, Proto: datapath.ProtoTCP},
				State: datapath.BackendActive}},
		}); err != nil {
			t.Fatal(err)
		}
	}

	capture := newVXLANCapture(t, ul, "ul-node1")
	if err := netnstest.Dial(a.ns, apiserver, 443, safety); err != nil {
		t.Fatalf("pod -> ClusterIP 10.96.0.1:443 (node 2's 6443): %v", err)
	}
	// Both ways through the tunnel: the pod's request with its
	// identity, node 2's answer as host.
	capture.vnisUntil(t, map[netip.Addr]uint32{n1.ip: uint32(a.identity), n2.ip: uint32(identity.ReservedHost)})

	if err := netnstest.Dial(a.ns, other, 443, time.Second); err == nil {
		t.Fatal("pod -> 10.96.0.2:443 (node 2's 7777) succeeded, want it dropped by the egress policy")
	}
	ev := n1.waitTCPDrop(t, a.ip, 7777)
	if ev.Direction != policy.Egress || ev.SrcIdentity != a.identity || ev.DstIdentity != identity.ReservedRemoteNode ||
		ev.Reason != eventsmap.ReasonPolicy || ev.Dst.Addr() != n2.ip {
		t.Errorf("drop event %+v, want egress from %d to remote-node %s:7777, reason policy", ev, a.identity, n2.ip)
	}
}
