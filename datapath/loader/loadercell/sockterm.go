package loadercell

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/apiary-net/apiary/datapath"
)

// sockTerminator destroys, in the node's network namespace, the sockets
// the socket-level balancer connected to backends that left the maps
// (loader.TerminateSockets): the writer hands it each deleted backend
// under its lock (add), and run does the work outside of it.
type sockTerminator struct {
	d   *Datapath
	log *slog.Logger

	mu    sync.Mutex
	queue []datapath.L3n4Addr
	wake  chan struct{}

	destroyed atomic.Uint64 // sockets destroyed, for the status line
}

func newSockTerminator(d *Datapath, log *slog.Logger) *sockTerminator {
	return &sockTerminator{d: d, log: log, wake: make(chan struct{}, 1)}
}

// add queues backend b (lbmap.Writer.OnBackendDeleted).
func (t *sockTerminator) add(b datapath.L3n4Addr) {
	if b.Proto != datapath.ProtoTCP && b.Proto != datapath.ProtoUDP {
		return
	}
	t.mu.Lock()
	t.queue = append(t.queue, b)
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// run terminates the queued backends' sockets until ctx ends.
func (t *sockTerminator) run(ctx context.Context) {
	for {
		select {
		case <-t.wake:
		case <-ctx.Done():
			return
		}
		t.mu.Lock()
		queue := t.queue
		t.queue = nil
		t.mu.Unlock()
		for _, b := range queue {
			var n int
			err := t.d.inNetNS(func() (err error) {
				n, err = t.d.l.TerminateSockets(b)
				return err
			})
			switch {
			case err != nil:
				t.log.Warn("Unable to terminate the sockets connected to a deleted backend", "backend", b.String(), "error", err)
			case n > 0:
				t.destroyed.Add(uint64(n))
				t.log.Info("Terminated the sockets connected to a deleted backend", "backend", b.String(), "sockets", n)
			}
		}
	}
}
