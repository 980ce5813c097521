package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/hack/bench"
)

// sample is one timed section: wall time and the process's CPU time.
type sample struct{ wall, cpu time.Duration }

// results are every round's samples of both workloads, [apiary, raw],
// and with -layers the change's two halves: [converter and manager with
// a writer that writes nothing, the lbmap writer alone].
type results struct {
	sync, change, layers [2][]sample
}

func measure(services, backends, changes, rounds int, layers bool) (*results, error) {
	root, done, err := bench.BPFRoot("svcbench")
	if err != nil {
		return nil, err
	}
	defer done()
	// Every map sized for the services and the changes' extra backend,
	// as --bpf-lb-map-max would be (at least the programs' 65536).
	size := uint32(max(services*(backends+2), 65536))
	in := inputs(services, backends)
	want, ops, err := record(filepath.Join(root, "record"), in, backends, changes, size)
	if err != nil {
		return nil, fmt.Errorf("record the raw writes: %w", err)
	}
	res := &results{}
	for r := range rounds {
		if err := res.round(r, filepath.Join(root, fmt.Sprint(r)), in, want, ops, changes, size, layers); err != nil {
			return nil, fmt.Errorf("round %d: %w", r, err)
		}
	}
	return res, nil
}

// round times both workloads on fresh maps, alternating which side goes
// first (with layers, the change's halves too).
func (res *results) round(r int, dir string, in []input, want bench.LBEntries4, ops [][]op, changes int, size uint32, layers bool) error {
	s, err := newSide(dir, size)
	if err != nil {
		return err
	}
	defer s.close()
	raw, err := newRawMaps(size)
	if err != nil {
		return err
	}
	defer raw.close()
	var ours, theirs sample
	err = bench.InOrder(r,
		func() (err error) { ours, err = timed(func() error { return s.sync(in) }); return err },
		func() (err error) {
			theirs, err = timed(func() error { return want.Write(raw.be, raw.rev, raw.svc) })
			return err
		})
	if err != nil {
		return fmt.Errorf("initial sync: %w", err)
	}
	res.sync[0], res.sync[1] = append(res.sync[0], ours), append(res.sync[1], theirs)
	sides := []func(j int) error{
		func(j int) error { return s.change(in, j) },
		func(j int) error { return raw.apply(ops[j]) },
	}
	prep := func(int) {}
	if layers {
		l, err := newLayers(dir+"-writer", in, size)
		if err != nil {
			return fmt.Errorf("layers: %w", err)
		}
		defer l.close()
		prep = func(j int) { l.prepare(in, j) }
		sides = append(sides, func(j int) error { return l.controlPlane(in, j) }, l.writerAlone)
	}
	got, err := paired(in, changes, prep, sides...)
	if err = errors.Join(err, s.failed()); err != nil {
		return fmt.Errorf("EndpointSlice changes: %w", err)
	}
	res.change[0], res.change[1] = append(res.change[0], got[0]), append(res.change[1], got[1])
	if layers {
		res.layers[0], res.layers[1] = append(res.layers[0], got[2]), append(res.layers[1], got[3])
	}
	return nil
}

// timed runs fn after a GC and returns its wall and process CPU time.
func timed(fn func() error) (sample, error) {
	runtime.GC()
	c0, t0 := bench.ProcessCPU(), time.Now()
	err := fn()
	return sample{wall: time.Since(t0), cpu: bench.ProcessCPU() - c0}, err
}

// paired times each of the n changes on every side (apiary's, the raw
// writes, and with -layers the two halves of apiary's), one after the
// other (which first rotates), so that a slow moment of the shared
// machine falls on all. prep(j) runs first, untimed. Before each side's
// change, untimed, the change's EndpointSlice is read once (touch), as
// the informer has just decoded it when it calls the handler; the
// bench's objects, built before the sync, are long out of the caches
// otherwise. The cost of the clock reads (clockCost) is taken off each.
func paired(in []input, n int, prep func(j int), sides ...func(j int) error) ([]sample, error) {
	runtime.GC()
	got := make([]sample, len(sides))
	one := func(j int, fn func(int) error, into *sample) error {
		touch(in[target(j, len(in))].slices[(j+1)%2])
		w0, c0 := time.Now(), bench.ProcessCPU()
		err := fn(j)
		c1 := bench.ProcessCPU()
		into.wall += time.Since(w0)
		into.cpu += c1 - c0
		return err
	}
	for j := range n {
		prep(j)
		for k := range sides {
			i := (j + k) % len(sides)
			if err := one(j, sides[i], &got[i]); err != nil {
				return nil, fmt.Errorf("change %d: %w", j, err)
			}
		}
	}
	empty := clockCost(n)
	for i := range got {
		got[i].wall, got[i].cpu = got[i].wall-empty.wall, got[i].cpu-empty.cpu
	}
	return got, nil
}

// clockCost is what n timed sections of perChange cost with nothing in
// them.
func clockCost(n int) sample {
	var total sample
	for range n {
		w0, c0 := time.Now(), bench.ProcessCPU()
		c1 := bench.ProcessCPU()
		total.wall += time.Since(w0)
		total.cpu += c1 - c0
	}
	return total
}

// sink keeps touch's reads from being optimised away.
var sink int

// touch reads every field of sl that the control plane reads.
func touch(sl *discoveryv1.EndpointSlice) {
	n := len(sl.Name) + len(sl.ResourceVersion) + len(sl.AddressType) + len(sl.Namespace)
	for k := range len(sl.Name) {
		n += int(sl.Name[k])
	}
	svc := sl.Labels[discoveryv1.LabelServiceName] // the watcher's key of the slice's service
	for k := range len(svc) {
		n += int(svc[k])
	}
	for i := range sl.Ports {
		p := &sl.Ports[i]
		if p.Port != nil {
			n += int(*p.Port)
		}
		if p.Name != nil {
			n += len(*p.Name)
		}
		if p.Protocol != nil {
			n += len(*p.Protocol)
		}
	}
	for i := range sl.Endpoints {
		ep := &sl.Endpoints[i]
		for _, a := range ep.Addresses {
			for k := range len(a) {
				n += int(a[k])
			}
		}
		for _, b := range []*bool{ep.Conditions.Ready, ep.Conditions.Serving, ep.Conditions.Terminating} {
			if b != nil && *b {
				n++
			}
		}
		if ep.NodeName != nil {
			n += len(*ep.NodeName)
		}
	}
	sink += n
}

// rawMaps are unpinned maps of the lbmap writer's specs, written with
// plain cilium/ebpf calls.
type rawMaps struct{ svc, be, rev *ebpf.Map }

func newRawMaps(size uint32) (*rawMaps, error) {
	r := &rawMaps{}
	for _, x := range []struct {
		name string
		m    **ebpf.Map
	}{{lbmap.Services4Name, &r.svc}, {lbmap.Backends4Name, &r.be}, {lbmap.RevNAT4Name, &r.rev}} {
		spec, err := lbmap.Spec(x.name, size)
		if err != nil {
			r.close()
			return nil, err
		}
		if *x.m, err = ebpf.NewMap(spec); err != nil {
			r.close()
			return nil, fmt.Errorf("create %s: %w", x.name, err)
		}
	}
	return r, nil
}

// apply makes the recorded writes of the changes.
func (r *rawMaps) apply(ops []op) error {
	for i := range ops {
		o := &ops[i]
		var err error
		// Keys and values as raw memory, as the writer hands them.
		switch {
		case o.pair:
			var n int
			n, err = r.svc.BatchUpdate(bpfmap.Raw[lbmap.Service4Key](o.keys), bpfmap.Raw[lbmap.ServiceValue](o.vals), nil)
			if err == nil && n != 2 {
				err = fmt.Errorf("batch wrote %d of 2 entries", n)
			}
		case o.svc && o.del:
			err = r.svc.Delete(unsafe.Pointer(&o.sk))
		case o.svc:
			err = r.svc.Update(unsafe.Pointer(&o.sk), unsafe.Pointer(&o.sv), ebpf.UpdateAny)
		case o.del:
			err = r.be.Delete(unsafe.Pointer(&o.bk))
		default:
			err = r.be.Update(unsafe.Pointer(&o.bk), unsafe.Pointer(&o.bv), ebpf.UpdateAny)
		}
		if err != nil {
			return fmt.Errorf("raw write %d: %w", i, err)
		}
	}
	return nil
}

func (r *rawMaps) close() {
	for _, m := range []*ebpf.Map{r.svc, r.be, r.rev} {
		if m != nil {
			m.Close()
		}
	}
}

// median returns the median of the samples (wall and CPU each).
func median(ss []sample) sample {
	w, c := make([]time.Duration, len(ss)), make([]time.Duration, len(ss))
	for i, s := range ss {
		w[i], c[i] = s.wall, s.cpu
	}
	return sample{wall: bench.Median(w), cpu: bench.Median(c)}
}
