package main

import (
	"errors"
	"iter"

	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// layers are the two halves of apiary's side of a change, each on state
// of its own synced as apiary's (-layers): the converter and manager
// with a writer that writes nothing, and the lbmap writer alone, handed
// the list the manager would hand it (prepared untimed before the
// change, as the manager's list is in its cache when it calls the
// writer).
type layers struct {
	control side               // a watcher and a manager whose writer writes nothing
	writer  *side              // synced as apiary's
	next    datapath.LBService // change j's list for the writer
}

func newLayers(dir string, in []input, size uint32) (*layers, error) {
	w, err := newSide(dir, size)
	if err != nil {
		return nil, err
	}
	m := svcmanager.New(nopWriter{}, svcmanager.Node{Name: "node1"}, log)
	l := &layers{writer: w, control: side{m: m, watch: newWatcher(m)}}
	if err := errors.Join(w.sync(in), l.control.sync(in)); err != nil {
		return nil, errors.Join(err, w.close())
	}
	return l, nil
}

// prepare computes change j's list for writerAlone.
func (l *layers) prepare(in []input, j int) {
	x := in[target(j, len(in))]
	svc := svcmanager.FromKubernetes(x.svc, []*discoveryv1.EndpointSlice{x.slices[(j+1)%2]})
	l.next = svcmanager.Desired(svc, nil, svcmanager.Node{Name: "node1"})[0]
}

// controlPlane is change j through the watcher, the converter and the
// manager only.
func (l *layers) controlPlane(in []input, j int) error {
	return l.control.change(in, j)
}

// writerAlone writes the list prepare computed.
func (l *layers) writerAlone(int) error { return l.writer.w.UpsertService(l.next) }

func (l *layers) close() error { return l.writer.close() }

// nopWriter is an LBMapWriter that writes nothing.
type nopWriter struct{}

func (nopWriter) UpsertService(datapath.LBService) error { return nil }
func (nopWriter) DeleteService(datapath.L3n4Addr) error  { return nil }
func (nopWriter) Changes() uint64                        { return 0 }
func (nopWriter) ReconcileServices(svcs iter.Seq[datapath.LBService]) (int, int, error) {
	n := 0
	for range svcs {
		n++
	}
	return n, 0, nil
}
