package hubblecell

import (
	"log/slog"
	"net/netip"
	"sync"

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
}

// open opens the maps; a failure leaves the flows without the services
// of translated packets, and is logged.
func (r *revNATMaps) open() {
	m, err := lbmap.OpenMaps(r.log, r.root)
	if err != nil {
		r.log.Warn("Unable to open the load-balancing maps: flows of translated packets will not name their service", "error", err)
		return
	}
	r.mu.Lock()
	r.m = m
	r.mu.Unlock()
}

func (r *revNATMaps) close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
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
	if r.m == nil {
		return netip.AddrPort{}, false
	}
	return r.m.RevNATFrontend(idx, v4)
}
