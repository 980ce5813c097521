package lbmap

import (
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
)

// Maps are the load-balancing maps pinned under a bpf root.
type Maps struct {
	svc4, svc6, be4, be6, rev4, rev6, affinity, match, reverseSock, snat *ebpf.Map
	range4, range6                                                       *ebpf.Map
}

// OpenMaps opens the load-balancing maps pinned under root whatever
// their size (the loader sizes them, --bpf-lb-map-max), creating those
// missing, or of another layout, at the programs' default size.
func OpenMaps(log *slog.Logger, root string) (*Maps, error) {
	var m Maps
	dst := m.fields()
	for i, name := range MapNames {
		em, err := openAnySize(log, root, name)
		if err != nil {
			m.Close()
			return nil, err
		}
		*dst[i] = em
	}
	if err := m.checkSizes(); err != nil {
		m.Close()
		return nil, err
	}
	return &m, nil
}

// fields are m's maps, in the order of MapNames.
func (m *Maps) fields() []**ebpf.Map {
	return []**ebpf.Map{&m.svc4, &m.svc6, &m.be4, &m.be6, &m.rev4, &m.rev6, &m.affinity, &m.match, &m.reverseSock, &m.snat,
		&m.range4, &m.range6}
}

// openAnySize opens the pinned map name when its type, key and value
// match the programs', whatever its max entries; else as
// bpfmap.OpenShared does.
func openAnySize(log *slog.Logger, root, name string) (*ebpf.Map, error) {
	spec, err := bpfmap.MapSpec(name)
	if err != nil {
		return nil, err
	}
	if pinned, err := ebpf.LoadPinnedMap(filepath.Join(root, name), nil); err == nil {
		spec.MaxEntries = pinned.MaxEntries()
		if spec.Compatible(pinned) == nil {
			return pinned, nil
		}
		pinned.Close()
	}
	return bpfmap.OpenShared(log, root, name)
}

// Spec returns the spec of load-balancing map name with maxEntries
// entries (0: the programs' default), as Cilium's --bpf-lb-map-max sizes
// every load-balancing map.
func Spec(name string, maxEntries uint32) (*ebpf.MapSpec, error) {
	spec, err := bpfmap.MapSpec(name)
	if err != nil {
		return nil, err
	}
	if maxEntries != 0 {
		spec.MaxEntries = maxEntries
	}
	return spec, nil
}

// Close releases the maps' file descriptors; the pins stay.
func (m *Maps) Close() error {
	var errs []error
	for _, em := range m.fields() {
		if *em != nil {
			errs = append(errs, (*em).Close())
		}
	}
	return errors.Join(errs...)
}

func (m *Maps) services(v4 bool) *ebpf.Map {
	if v4 {
		return m.svc4
	}
	return m.svc6
}

func (m *Maps) backends(v4 bool) *ebpf.Map {
	if v4 {
		return m.be4
	}
	return m.be6
}

func (m *Maps) revNAT(v4 bool) *ebpf.Map {
	if v4 {
		return m.rev4
	}
	return m.rev6
}

// del deletes key from em; a missing key is not an error. It counts
// the deletion in w.wrote.
func (w *Writer) del(em *ebpf.Map, key any) error {
	err := em.Delete(key)
	switch {
	case err == nil:
		w.wrote++
	case !errors.Is(err, ebpf.ErrKeyNotExist):
		return err
	}
	return nil
}
