package hubble

import (
	"errors"
	"maps"
	"slices"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
)

// peerQueue is how many changes a Notify stream may be behind before it
// is ended (the client reconnects and gets the whole list again).
const peerQueue = 256

// Peers is Hubble's peer.Peer service: it lists the nodes whose observer
// a relay can reach (name "<cluster>/<node>", address "ip:port") and
// streams their changes. The hubble cell fills it from the node manager.
type Peers struct {
	peer.UnimplementedPeerServer

	mu    sync.Mutex
	nodes map[string]Peer // by name
	subs  map[chan *peer.ChangeNotification]struct{}
	done  chan struct{}
}

// Peer is one node of the list.
type Peer struct {
	// Address is where its observer listens, "ip:port".
	Address string
	// TLSServerName is the name in its certificate, when it serves TLS.
	TLSServerName string
}

func (p Peer) notification(name string, typ peer.ChangeNotificationType) *peer.ChangeNotification {
	cn := &peer.ChangeNotification{Name: name, Address: p.Address, Type: typ}
	if p.TLSServerName != "" {
		cn.Tls = &peer.TLS{ServerName: p.TLSServerName}
	}
	return cn
}

var _ peer.PeerServer = (*Peers)(nil)

// NewPeers returns an empty list.
func NewPeers() *Peers {
	return &Peers{nodes: map[string]Peer{}, subs: map[chan *peer.ChangeNotification]struct{}{}, done: make(chan struct{})}
}

// Upsert adds a node or changes it.
func (p *Peers) Upsert(name string, np Peer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.nodes[name]
	if ok && old == np {
		return
	}
	p.nodes[name] = np
	typ := peer.ChangeNotificationType_PEER_ADDED
	if ok {
		typ = peer.ChangeNotificationType_PEER_UPDATED
	}
	p.publishLocked(np.notification(name, typ))
}

// Delete removes a node.
func (p *Peers) Delete(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	np, ok := p.nodes[name]
	if !ok {
		return
	}
	delete(p.nodes, name)
	p.publishLocked(np.notification(name, peer.ChangeNotificationType_PEER_DELETED))
}

// publishLocked queues cn for every stream; a stream whose queue is full
// is dropped (its Notify ends with an error).
func (p *Peers) publishLocked(cn *peer.ChangeNotification) {
	for ch := range p.subs {
		select {
		case ch <- cn:
		default:
			delete(p.subs, ch)
			close(ch)
		}
	}
}

// Stop ends every Notify stream.
func (p *Peers) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.done:
	default:
		close(p.done)
	}
}

// errPeerQueueFull ends a stream that fell behind.
var errPeerQueueFull = errors.New("too many peer changes queued: reconnect")

// Notify sends every known node as added, then the changes, until the
// client goes or the service stops.
func (p *Peers) Notify(_ *peer.NotifyRequest, stream peer.Peer_NotifyServer) error {
	ch := make(chan *peer.ChangeNotification, peerQueue)
	p.mu.Lock()
	names := slices.Sorted(maps.Keys(p.nodes))
	initial := make([]*peer.ChangeNotification, 0, len(names))
	for _, n := range names {
		initial = append(initial, p.nodes[n].notification(n, peer.ChangeNotificationType_PEER_ADDED))
	}
	p.subs[ch] = struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if _, ok := p.subs[ch]; ok {
			delete(p.subs, ch)
		}
		p.mu.Unlock()
	}()
	for _, cn := range initial {
		if err := stream.Send(cn); err != nil {
			return err
		}
	}
	for {
		select {
		case <-stream.Context().Done():
			return nil
		case <-p.done:
			return nil
		case cn, ok := <-ch:
			if !ok {
				return status.Error(codes.ResourceExhausted, errPeerQueueFull.Error())
			}
			if err := stream.Send(cn); err != nil {
				return err
			}
		}
	}
}

// Nodes returns the listed nodes by name.
func (p *Peers) Nodes() map[string]Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.nodes)
}
