package hubble

import (
	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
)

// Peer is Hubble's peer.Peer service: it lists the nodes whose observer
// a relay can reach. apiary's agent lists itself; with a kvstore, every
// node of the cluster is reachable through its own agent.
type Peer struct {
	peer.UnimplementedPeerServer

	// Self returns this node's name and its observer's address.
	Self func() (name, address string)
}

var _ peer.PeerServer = (*Peer)(nil)

// Notify sends this node as added, then holds the stream until the
// client goes.
func (p *Peer) Notify(_ *peer.NotifyRequest, stream peer.Peer_NotifyServer) error {
	name, addr := p.Self()
	if err := stream.Send(&peer.ChangeNotification{Name: name, Address: addr, Type: peer.ChangeNotificationType_PEER_ADDED}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}
