package loadercell

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
	"github.com/apiary-net/apiary/datapath/loader"
)

// sockTerminator destroys the sockets the socket-level balancer
// connected to backends that left the maps (loader.SockTerminator): the
// writer hands it each deleted backend under its lock (add), and run
// does the work outside of it, in the node's network namespace and,
// unless the balancer serves the node's namespace only, in every other
// namespace of the machine (the pods': only sockets the balancer
// connected there are touched).
type sockTerminator struct {
	d          *Datapath
	log        *slog.Logger
	hostNSOnly bool

	mu    sync.Mutex
	queue []datapath.L3n4Addr
	wake  chan struct{}

	destroyed atomic.Uint64 // sockets destroyed, for the status line
}

func newSockTerminator(d *Datapath, log *slog.Logger, hostNSOnly bool) *sockTerminator {
	return &sockTerminator{d: d, log: log, hostNSOnly: hostNSOnly, wake: make(chan struct{}, 1)}
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
	var term *loader.SockTerminator
	defer func() {
		if term != nil {
			term.Close()
		}
	}()
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
		if term == nil {
			var err error
			if term, err = t.d.l.NewSockTerminator(); err != nil {
				t.log.Warn("Unable to terminate the sockets connected to deleted backends", "backends", len(queue), "error", err)
				continue
			}
		}
		t.terminate(term, queue)
	}
}

// terminate destroys the sockets of backends in each namespace.
func (t *sockTerminator) terminate(term *loader.SockTerminator, backends []datapath.L3n4Addr) {
	counts := make([]int, len(backends))
	var failed error // the first failure of the terminator itself
	each := func() error {
		for i, b := range backends {
			n, err := term.Terminate(b)
			if err != nil {
				if failed == nil {
					failed = err
				}
				return nil
			}
			counts[i] += n
		}
		return nil
	}
	if err := t.d.inNetNS(each); err != nil {
		t.log.Warn("Unable to terminate the sockets connected to deleted backends", "error", err)
	}
	if !t.hostNSOnly {
		node := t.d.netns
		if node == "" {
			node = "/proc/thread-self/ns/net"
		}
		others, err := netnsutil.All(node)
		if err != nil {
			t.log.Warn("Unable to terminate the pods' sockets connected to deleted backends", "error", err)
		}
		for _, ns := range others {
			netnsutil.RunPath(ns, each) // a namespace gone meanwhile has no sockets
		}
	}
	if failed != nil {
		t.log.Warn("Unable to terminate the sockets connected to deleted backends", "error", failed)
	}
	for i, b := range backends {
		if counts[i] > 0 {
			t.destroyed.Add(uint64(counts[i]))
			t.log.Info("Terminated the sockets connected to a deleted backend", "backend", b.String(), "sockets", counts[i])
		}
	}
}
