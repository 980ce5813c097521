package bpfsim

import (
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/rlimit"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/configmap"
	"github.com/apiary-net/apiary/datapath/maps/ctmap"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy/simulate"
)

// ErrPrivilege is wrapped by New when this process may not load BPF
// programs or mount a bpffs (it needs root, or CAP_BPF, CAP_NET_ADMIN
// and CAP_SYS_ADMIN).
var ErrPrivilege = errors.New("needs root (CAP_BPF, CAP_NET_ADMIN and CAP_SYS_ADMIN: it loads BPF programs and mounts a private bpffs)")

// Datapath is a private instance of the endpoint programs and their maps
// loaded for one simulation. It is not safe for concurrent use.
type Datapath struct {
	model   *simulate.Model
	dir     string // the temporary directory the bpffs is mounted on
	mounted bool
	loader  *loader.Loader
	ipcache *ipcachemap.Map
	ct      *ctmap.Maps
	events  *eventsmap.Reader
	addrs   *addressBook
	// endpoints are the local endpoints loaded so far, by model
	// endpoint.
	endpoints map[*simulate.EndpointModel]*endpoint
	nextID    uint16
}

// New mounts a private bpffs, opens the programs' maps in it and fills the
// ipcache map with the model's prefixes. Programs are loaded per endpoint
// when a query first needs them. Close releases everything.
func New(log *slog.Logger, model *simulate.Model) (d *Datapath, err error) {
	if err := checkPrivilege(); err != nil {
		return nil, err
	}
	d = &Datapath{model: model, endpoints: map[*simulate.EndpointModel]*endpoint{}}
	defer func() {
		if err != nil {
			d.Close()
		}
	}()
	if d.dir, err = os.MkdirTemp("", "apiary-simulate-bpf-"); err != nil {
		return nil, fmt.Errorf("create private bpf root: %w", err)
	}
	if err := unix.Mount("bpffs", d.dir, "bpf", 0, "mode=0700"); err != nil {
		if errors.Is(err, unix.EPERM) {
			return nil, fmt.Errorf("%w: mount private bpffs on %s: %w", ErrPrivilege, d.dir, err)
		}
		return nil, fmt.Errorf("mount private bpffs on %s: %w", d.dir, err)
	}
	d.mounted = true
	if d.loader, err = loader.New(log, d.dir, policyMapSize(model)); err != nil {
		return nil, err
	}
	if err := d.loader.Open(); err != nil {
		return nil, err
	}
	if d.ipcache, err = ipcachemap.Open(log, d.dir); err != nil {
		return nil, err
	}
	if d.ct, err = ctmap.Open(log, d.dir); err != nil {
		return nil, err
	}
	if d.events, err = eventsmap.Open(log, d.dir); err != nil {
		return nil, err
	}
	if err := enableVerdictEvents(log, d.dir); err != nil {
		return nil, err
	}
	if d.addrs, err = newAddressBook(model.Prefixes, d.ipcache); err != nil {
		return nil, err
	}
	return d, nil
}

// enableVerdictEvents makes the programs report the verdicts of allowed
// flows too (as while a monitor client listens): the simulation reads
// which policy entry decided from them.
func enableVerdictEvents(log *slog.Logger, root string) error {
	cfg, err := configmap.Open(log, root)
	if err != nil {
		return err
	}
	return errors.Join(cfg.SetFlag(configmap.FlagVerdictEvents, true), cfg.Close())
}

// checkPrivilege creates a probe map: the clearest test of whether BPF is
// usable here.
func checkPrivilege() error {
	if err := rlimit.RemoveMemlock(); err != nil {
		return fmt.Errorf("%w: remove memlock limit: %w", ErrPrivilege, err)
	}
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Array, KeySize: 4, ValueSize: 4, MaxEntries: 1})
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: create a BPF map: %w", ErrPrivilege, err)
	case err != nil:
		return fmt.Errorf("create a BPF map (is BPF available in this kernel?): %w", err)
	}
	return m.Close()
}

// policyMapSize returns the size of every endpoint's policy map: the
// agent's default, or the largest map state when one is larger (the
// simulation shows verdicts; the agent would refuse such a state with
// --bpf-policy-map-max at its default).
func policyMapSize(model *simulate.Model) uint32 {
	size := policymap.DefaultMaxEntries
	for _, ep := range model.Endpoints {
		size = max(size, len(ep.MapState))
	}
	return uint32(size)
}

// Root returns the directory the private bpffs is mounted on (empty
// after Close).
func (d *Datapath) Root() string { return d.dir }

// Close unloads the programs, closes the maps and unmounts the private
// bpffs (which removes every pin), then removes its directory.
func (d *Datapath) Close() error {
	var errs []error
	for _, ep := range d.endpoints {
		errs = append(errs, ep.progs.Close())
	}
	d.endpoints = nil
	if d.events != nil {
		errs = append(errs, d.events.Close())
	}
	if d.ct != nil {
		errs = append(errs, d.ct.Close())
	}
	if d.ipcache != nil {
		errs = append(errs, d.ipcache.Close())
	}
	if d.loader != nil {
		errs = append(errs, d.loader.Close())
	}
	d.events, d.ct, d.ipcache, d.loader = nil, nil, nil, nil
	if d.mounted {
		if err := unix.Unmount(d.dir, unix.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmount private bpffs %s: %w", d.dir, err))
		}
		d.mounted = false
	}
	if d.dir != "" {
		if ok, _ := bpfmap.IsBPFFS(d.dir); !ok {
			errs = append(errs, os.Remove(d.dir))
		}
		d.dir = ""
	}
	return errors.Join(errs...)
}
