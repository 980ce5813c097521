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
	h := &peerHandler{peers: hubble.NewPeers(), port: listenPort(":4245"), self: "c1/node-a"}
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
	want := map[string]string{"c1/node-c": "192.0.2.11:4245", "c2/node-x": "[fd00::2]:4245"}
	if got := h.peers.Nodes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("peers %v, want %v", got, want)
	}
	if listenPort("") != 4244 {
		t.Errorf("default port %d, want 4244", listenPort(""))
	}
}
