package hubblecell

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/node"
)

// TestPeerHandlerFollowsNodes: nodes of the node manager, this cluster's
// and a remote one's, are listed by primary IP and the Hubble port, and
// leave the list when deleted or renamed.
func TestPeerHandlerFollowsNodes(t *testing.T) {
	h := &peerHandler{peers: hubble.NewPeers(), port: listenPort(":4245"), self: "c1/node-a", tls: true}
	addr := func(ip string) []node.Address {
		return []node.Address{{Type: node.NodeInternalIP, IP: netip.MustParseAddr(ip)}}
	}
	b := node.Node{Name: "node-b", Cluster: "c1", IPAddresses: addr("192.0.2.11")}
	r := node.Node{Name: "node-x", Cluster: "c2", IPAddresses: addr("fd00::2")}
	h.NodeAdd(b)
	h.NodeAdd(r)
	h.NodeAdd(node.Node{Name: "no-ip", Cluster: "c1"})
	renamed := b
	renamed.Name = "node-c"
	h.NodeUpdate(b, renamed)
	h.NodeDelete(r)
	h.NodeAdd(r)
	h.NodeAdd(node.Node{Name: "node-a", Cluster: "c1", IPAddresses: addr("192.0.2.10")}) // this node: its own entry stands
	want := map[string]hubble.Peer{
		"c1/node-c": {Address: "192.0.2.11:4245", TLSServerName: "node-c.c1.hubble-grpc.cilium.io"},
		"c2/node-x": {Address: "[fd00::2]:4245", TLSServerName: "node-x.c2.hubble-grpc.cilium.io"},
	}
	if got := h.peers.Nodes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("peers %v, want %v", got, want)
	}
	if listenPort("") != 4244 {
		t.Errorf("default port %d, want 4244", listenPort(""))
	}
}
