package hubblecell

import (
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/apiary-net/apiary/datapath/maps/lbmap"
)

// revNATMaps reads the frontends of rev-NAT indexes from the
// load-balancing maps pinned under root (hubble.RevNATs), open between
// the server's start and stop.
type revNATMaps struct {
	log  *slog.Logger
	root string

	mu sync.Mutex
	m  *lbmap.Maps
	// started: between the server's start and stop; lastTry: the last
	// opening.
	started bool
	lastTry time.Time
}

// open opens the maps; a failure leaves the flows without the services
// of translated packets, is logged, and is tried again at a lookup at
// most every reopenAfter.
func (r *revNATMaps) open() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started, r.lastTry = true, time.Now()
	r.openLocked()
}

// reopenAfter is how long after a failed opening the next lookup tries
// again.
const reopenAfter = 10 * time.Second

func (r *revNATMaps) openLocked() {
	m, err := lbmap.OpenMaps(r.log, r.root)
	if err != nil {
		r.log.Warn("Unable to open the load-balancing maps: flows of translated packets do not name their service", "error", err)
		return
	}
	r.m = m
}

func (r *revNATMaps) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = false
	if r.m == nil {
		return nil
	}
	err := r.m.Close()
	r.m = nil
	return err
}

// RevNATFrontend implements hubble.RevNATs.
func (r *revNATMaps) RevNATFrontend(idx uint16, v4 bool) (netip.AddrPort, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil && r.started && time.Since(r.lastTry) >= reopenAfter {
		r.lastTry = time.Now()
		r.openLocked()
	}
	if r.m == nil {
		return netip.AddrPort{}, false
	}
	return r.m.RevNATFrontend(idx, v4)
}
