package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/clustermesh/service"
	"github.com/apiary-net/apiary/clustermesh/service/k8ssvc"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

var log = slog.New(slog.DiscardHandler)

// side is apiary's control plane on fresh pinned maps under dir: the
// Kubernetes watcher handing services to a service manager writing
// through the lbmap writer, as the agent wires them (k8ssvc,
// svcmanagercell, loadercell).
type side struct {
	dir   string
	w     *lbmap.Writer
	m     *svcmanager.Manager
	watch *k8ssvc.Watcher
	maps  map[string]*ebpf.Map // the writer's IPv4 maps, for reading back
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
	s.watch = newWatcher(s.m)
	return s, nil
}

// newWatcher returns the agent's Kubernetes watcher handing services to
// m (and the global ones, none here, to a cache).
func newWatcher(m *svcmanager.Manager) *k8ssvc.Watcher {
	return k8ssvc.NewWatcher(service.NewCache(), nil, cluster.Info{ClusterName: "default", ClusterID: 1}, m)
}

// sync hands the watcher every Service and its slice of b endpoints, as
// the informers' initial listings deliver them, then both listings'
// end, on which the watcher hands every service to the manager; then
// runs the initial reconcile.
func (s *side) sync(in []input) error {
	for _, x := range in {
		s.watch.Service(k8s.Event[*corev1.Service]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: x.svc.Namespace, Name: x.svc.Name}, Object: x.svc})
		s.watch.EndpointSlice(sliceEvent(x.slices[0]))
	}
	s.watch.Service(k8s.Event[*corev1.Service]{Kind: k8s.Sync})
	s.watch.EndpointSlice(k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Sync})
	if !s.watch.Synced() {
		return errors.New("the watcher is not synced after both listings")
	}
	return s.m.Reconcile()
}

// change hands the watcher change j: service target(j)'s slice with one
// more endpoint (j even) or back without it (j odd).
func (s *side) change(in []input, j int) error {
	x := in[target(j, len(in))]
	s.watch.EndpointSlice(sliceEvent(x.slices[(j+1)%2]))
	return nil
}

// sliceEvent is the informer's event of slice sl added or changed.
func sliceEvent(sl *discoveryv1.EndpointSlice) k8s.Event[*discoveryv1.EndpointSlice] {
	return k8s.Event[*discoveryv1.EndpointSlice]{Kind: k8s.Upsert, Key: k8s.Key{Namespace: sl.Namespace, Name: sl.Name}, Object: sl}
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
