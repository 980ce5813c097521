package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

var log = slog.New(slog.DiscardHandler)

// side is apiary's control plane on fresh pinned maps under dir: a
// service manager writing through the lbmap writer, as the agent wires
// them (svcmanagercell, loadercell).
type side struct {
	dir  string
	w    *lbmap.Writer
	m    *svcmanager.Manager
	conv *svcmanager.Converter // the Kubernetes watcher's
	maps map[string]*ebpf.Map  // the writer's IPv4 maps, for reading back
}

// newSide creates the load-balancing maps sized as --bpf-lb-map-max
// sizes them, opens the writer on them and a manager on the writer.
func newSide(dir string, size uint32) (*side, error) {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	s := &side{dir: dir, maps: map[string]*ebpf.Map{}}
	for _, name := range lbmap.MapNames {
		spec, err := lbmap.Spec(name, size)
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		m, err := bpfmap.OpenOrCreate(log, spec, filepath.Join(dir, name))
		if err != nil {
			return nil, errors.Join(err, s.close())
		}
		switch name {
		case lbmap.Services4Name, lbmap.Backends4Name, lbmap.RevNAT4Name:
			s.maps[name] = m
		default:
			m.Close()
		}
	}
	w, err := lbmap.OpenWriter(log, dir)
	if err != nil {
		return nil, errors.Join(err, s.close())
	}
	s.w = w
	s.m = svcmanager.New(w, svcmanager.Node{Name: "node1"}, log)
	s.conv = svcmanager.NewConverter()
	return s, nil
}

// sync hands every Service with its slice of b endpoints to the manager,
// converted as the Kubernetes watcher converts them, then runs the
// initial reconcile.
func (s *side) sync(in []input) error {
	for _, x := range in {
		if svc := s.conv.Convert(x.svc, []*discoveryv1.EndpointSlice{x.slices[0]}); svc != nil {
			s.m.Upsert(svcmanager.SourceKubernetes, svc)
		}
	}
	return s.m.Reconcile()
}

// change hands the manager change j: service target(j)'s slice with one
// more endpoint (j even) or back without it (j odd).
func (s *side) change(in []input, j int) error {
	x := in[target(j, len(in))]
	svc := s.conv.Convert(x.svc, []*discoveryv1.EndpointSlice{x.slices[(j+1)%2]})
	if svc == nil {
		return fmt.Errorf("service %s/%s: not balanced", x.svc.Namespace, x.svc.Name)
	}
	s.m.Upsert(svcmanager.SourceKubernetes, svc)
	return nil
}

// failed returns the manager's last write error, if a write failed.
func (s *side) failed() error {
	if st := s.m.Stats(); st.Failures > 0 {
		return fmt.Errorf("%d map writes failed, last: %w", st.Failures, st.LastError)
	}
	return nil
}

func (s *side) close() error {
	var errs []error
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	for _, m := range s.maps {
		errs = append(errs, m.Close())
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}
