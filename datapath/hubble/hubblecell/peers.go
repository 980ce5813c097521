package hubblecell

import (
	"net"
	"strconv"

	"github.com/apiary-net/apiary/datapath/hubble"
	"github.com/apiary-net/apiary/datapath/node"
)

// defaultPeerPort is the port a relay dials on nodes when this agent
// has no --hubble-listen-address (Cilium's default, 4244): every agent of
// a cluster is expected to listen on the same one.
const defaultPeerPort = 4244

// peerHandler keeps the Peer service's list in step with the node
// manager: every node, of this cluster and of meshed ones, by its
// primary IP and the Hubble port.
type peerHandler struct {
	peers *hubble.Peers
	port  int
	tls   bool // the nodes serve TLS: each gets its server name
	// self is this node's name: its entry (newPeers) names the address
	// it listens on, which the node manager does not know.
	self string
}

var _ node.NodeHandler = (*peerHandler)(nil)

func (h *peerHandler) Name() string { return "hubble-peers" }

func (h *peerHandler) NodeAdd(n node.Node) error { h.upsert(n); return nil }

func (h *peerHandler) NodeUpdate(old, n node.Node) error {
	if peerName(old) != peerName(n) && peerName(old) != h.self {
		h.peers.Delete(peerName(old))
	}
	h.upsert(n)
	return nil
}

func (h *peerHandler) NodeDelete(n node.Node) error {
	if peerName(n) != h.self {
		h.peers.Delete(peerName(n))
	}
	return nil
}

func (h *peerHandler) NodeValidateImplementation(n node.Node) error { h.upsert(n); return nil }

func (h *peerHandler) upsert(n node.Node) {
	if peerName(n) == h.self {
		return
	}
	ip := n.PrimaryIP(false)
	if !ip.IsValid() {
		ip = n.PrimaryIP(true)
	}
	if !ip.IsValid() {
		return
	}
	np := hubble.Peer{Address: net.JoinHostPort(ip.String(), strconv.Itoa(h.port))}
	if h.tls {
		np.TLSServerName = tlsServerName(n.Name, n.Cluster)
	}
	h.peers.Upsert(peerName(n), np)
}

// peerName is Hubble's node name: "<cluster>/<node>".
func peerName(n node.Node) string {
	if n.Cluster == "" {
		return n.Name
	}
	return n.Cluster + "/" + n.Name
}

// listenPort is the port of --hubble-listen-address, or defaultPeerPort.
func listenPort(listen string) int {
	if _, p, err := net.SplitHostPort(listen); err == nil {
		if n, err := strconv.Atoi(p); err == nil && n > 0 {
			return n
		}
	}
	return defaultPeerPort
}
