package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/apiary-net/apiary/bpf"
)

// NetdevLinkDir is the directory the NodePort programs' links of device
// name are pinned in.
func (l *Loader) NetdevLinkDir(name string) string {
	return filepath.Join(l.root, "links", "netdev", name)
}

// AttachNodePort loads the NodePort programs (bpf/netdev.c) with the
// shared maps and attaches them with tcx to the node's device name
// (ifindex): from_netdev on ingress, to_netdev on egress. Links pinned by
// an earlier run on the same interface are updated in place.
func (l *Loader) AttachNodePort(name string, ifindex int) error {
	spec, err := bpf.LoadNetdev()
	if err != nil {
		return fmt.Errorf("attach NodePort programs to %s: %w", name, err)
	}
	err = setVariables(spec, map[string]any{
		bpf.NetdevVarServiceNoBackendReject: l.noBackendReject(),
		bpf.NetdevVarExternalClusterip:      boolByte(l.externalClusterIP),
	})
	if err != nil {
		return fmt.Errorf("attach NodePort programs to %s: %w", name, err)
	}
	repl, open := l.sharedReplacements(spec)
	if !open {
		return errors.New("attach NodePort programs: loader not open")
	}
	var objs bpf.NetdevPrograms
	if err := spec.LoadAndAssign(&objs, &ebpf.CollectionOptions{MapReplacements: repl}); err != nil {
		return loadError("load NodePort programs", err)
	}
	defer objs.Close()
	dir := l.NetdevLinkDir(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("attach NodePort programs to %s: %w", name, err)
	}
	for _, h := range []struct {
		hook string
		at   ebpf.AttachType
		prog *ebpf.Program
	}{{HookIngress, ebpf.AttachTCXIngress, objs.FromNetdev}, {HookEgress, ebpf.AttachTCXEgress, objs.ToNetdev}} {
		if err := attachPinnedTCX(filepath.Join(dir, h.hook), ifindex, h.at, h.prog); err != nil {
			return fmt.Errorf("attach NodePort %s program to %s: %w", h.hook, name, err)
		}
	}
	return nil
}

// attachPinnedTCX makes the tcx link pinned at pin run prog on ifindex:
// updated when it is there already, else attached and pinned.
func attachPinnedTCX(pin string, ifindex int, at ebpf.AttachType, prog *ebpf.Program) error {
	if old, err := link.LoadPinnedLink(pin, nil); err == nil {
		defer old.Close()
		if target, terr := tcxTarget(old, at); terr == nil && target == ifindex {
			return old.Update(prog)
		}
		if err := old.Unpin(); err != nil { // stale: the device changed
			return err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("open pinned link: %w", err)
	}
	lk, err := link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: prog, Attach: at})
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("%w: %w", ErrTCXUnsupported, err)
	}
	if err != nil {
		return err
	}
	defer lk.Close()
	return lk.Pin(pin)
}

// DetachNodePort detaches the NodePort programs from device name; none
// attached is not an error.
func (l *Loader) DetachNodePort(name string) error {
	dir := l.NetdevLinkDir(name)
	var errs []error
	for _, hook := range []string{HookIngress, HookEgress} {
		errs = append(errs, removePinnedLink(filepath.Join(dir, hook)))
	}
	errs = append(errs, os.RemoveAll(dir))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach NodePort programs from %s: %w", name, err)
	}
	return nil
}
