// Package svcmanagertest is a fake datapath.LBMapWriter for the service
// manager's tests: it records every call that changes what it holds and
// keeps the frontends it was given, as the BPF maps would (an upsert of
// a frontend as it holds it is no write).
package svcmanagertest

import (
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"

	"github.com/apiary-net/apiary/datapath"
)

// ErrFull is what a failing Writer returns.
var ErrFull = errors.New("map full")

// Writer records the calls of a service manager.
type Writer struct {
	mu      sync.Mutex
	calls   []string
	maps    map[datapath.L3n4Addr]datapath.LBService
	failing bool
	changes uint64
	asked   int // UpsertService calls, writing or not
}

var _ datapath.LBMapWriter = (*Writer)(nil)

// New returns an empty writer.
func New() *Writer { return &Writer{maps: map[datapath.L3n4Addr]datapath.LBService{}} }

// SetFailing makes every later call fail with ErrFull (or succeed).
func (w *Writer) SetFailing(failing bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.failing = failing
}

// UpsertService records "upsert <Render(svc)>" unless it holds svc as
// it is.
func (w *Writer) UpsertService(svc datapath.LBService) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked++
	if cur, ok := w.maps[svc.Frontend]; ok && !w.failing && sameService(cur, svc) {
		return nil
	}
	w.calls = append(w.calls, "upsert "+Render(svc))
	if w.failing {
		return ErrFull
	}
	svc.Backends = slices.Clone(svc.Backends) // the caller's array: it may reuse it
	w.maps[svc.Frontend] = svc
	w.changes++
	return nil
}

// sameService compares what the maps hold of a frontend.
func sameService(a, b datapath.LBService) bool {
	return a.Frontend == b.Frontend && a.Type == b.Type && a.SessionAffinityTimeout == b.SessionAffinityTimeout &&
		a.LocalOnly == b.LocalOnly && a.TwoScopes == b.TwoScopes && slices.Equal(a.SourceRanges, b.SourceRanges) && slices.EqualFunc(a.Backends, b.Backends, func(x, y datapath.LBBackend) bool {
		return x.Addr == y.Addr && x.ClusterID == y.ClusterID && x.State == y.State
	})
}

// DeleteService records "delete <frontend>" unless it holds no such
// frontend.
func (w *Writer) DeleteService(fe datapath.L3n4Addr) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.maps[fe]; !ok && !w.failing {
		return nil
	}
	w.calls = append(w.calls, "delete "+fe.String())
	if w.failing {
		return ErrFull
	}
	delete(w.maps, fe)
	w.changes++
	return nil
}

// Changes implements datapath.LBMapWriter.
func (w *Writer) Changes() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.changes
}

// ReconcileServices records "reconcile <n>" and holds exactly svcs.
func (w *Writer) ReconcileServices(svcs iter.Seq[datapath.LBService]) (int, int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for range svcs {
		n++
	}
	w.calls = append(w.calls, fmt.Sprintf("reconcile %d", n))
	if w.failing {
		return 0, 0, ErrFull
	}
	old := w.maps
	w.maps = map[datapath.L3n4Addr]datapath.LBService{}
	added := 0
	for s := range svcs {
		if _, ok := old[s.Frontend]; !ok {
			added++
		}
		delete(old, s.Frontend)
		s.Backends = slices.Clone(s.Backends) // valid until the next one
		w.maps[s.Frontend] = s
	}
	return added, len(old), nil
}

// Asked returns how many times UpsertService was called, whether or not
// it wrote.
func (w *Writer) Asked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.asked
}

// Take returns the calls since the last Take.
func (w *Writer) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.calls
	w.calls = nil
	return c
}

// Calls returns the calls since the last Take, keeping them.
func (w *Writer) Calls() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.calls...)
}

// Get returns the frontend the maps hold at fe.
func (w *Writer) Get(fe datapath.L3n4Addr) (datapath.LBService, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s, ok := w.maps[fe]
	return s, ok
}

// Dump renders what the maps hold, one Render per frontend, sorted.
func (w *Writer) Dump() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.maps))
	for _, s := range w.maps {
		out = append(out, Render(s))
	}
	slices.Sort(out)
	return out
}

// Render is "<frontend> <type>[ local][ twoscopes][ affinity=<t>][ sourceRanges=<prefix>,...] -> <backend>(<state>[,c<id>]) ...".
func Render(s datapath.LBService) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", s.Frontend, s.Type)
	if s.LocalOnly {
		b.WriteString(" local")
	}
	if s.TwoScopes {
		b.WriteString(" twoscopes")
	}
	if s.SessionAffinityTimeout != 0 {
		fmt.Fprintf(&b, " affinity=%s", s.SessionAffinityTimeout)
	}
	for i, p := range s.SourceRanges {
		sep := ","
		if i == 0 {
			sep = " sourceRanges="
		}
		fmt.Fprintf(&b, "%s%s", sep, p)
	}
	b.WriteString(" ->")
	for _, be := range s.Backends {
		st := map[datapath.BackendState]string{datapath.BackendActive: "active", datapath.BackendTerminating: "terminating",
			datapath.BackendQuarantined: "quarantined"}[be.State]
		if be.ClusterID != 0 {
			st += fmt.Sprintf(",c%d", be.ClusterID)
		}
		fmt.Fprintf(&b, " %s(%s)", be.Addr, st)
	}
	return b.String()
}
