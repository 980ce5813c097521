package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/bpf"
)

// OverlayProgram is the name of the overlay program and of its tc filter.
const OverlayProgram = "from_overlay"

// overlayLinkPath is where the overlay program's tcx link is pinned.
func (l *Loader) overlayLinkPath() string {
	return filepath.Join(l.root, "links", "overlay", HookIngress)
}

// AttachOverlay loads from_overlay (bpf/overlay.c) and attaches it to the
// tc ingress of the tunnel device ifindex (tunnel routing, docs/datapath.md),
// replacing an earlier agent's program atomically when its pinned link is
// on the same device. Endpoint programs loaded afterwards (Load, Attach)
// encapsulate to this device; those loaded before keep their setting
// until their next Attach.
func (l *Loader) AttachOverlay(ifindex int) error {
	if ifindex <= 0 {
		return fmt.Errorf("attach overlay program: ifindex must be positive")
	}
	var objs bpf.OverlayObjects
	if err := bpf.LoadOverlayObjects(&objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("load overlay program: %+v", ve)
		}
		return fmt.Errorf("load overlay program: %w", err)
	}
	defer objs.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.mode == AttachTC {
		err = tcAttachOverlay(ifindex, objs.FromOverlay)
	} else {
		err = l.tcxAttachOverlay(ifindex, objs.FromOverlay)
		if errors.Is(err, ErrTCXUnsupported) && l.mode == AttachAuto {
			err = tcAttachOverlay(ifindex, objs.FromOverlay)
		}
	}
	if err != nil {
		return fmt.Errorf("attach overlay program to interface %d: %w", ifindex, err)
	}
	l.tunnelIfIndex = ifindex
	return nil
}

// tcxAttachOverlay replaces the program of the pinned link when it is on
// ifindex, else attaches a new link and pins it; l.mu is held.
func (l *Loader) tcxAttachOverlay(ifindex int, prog *ebpf.Program) error {
	path := l.overlayLinkPath()
	if lk, err := link.LoadPinnedLink(path, nil); err == nil {
		target, terr := tcxTarget(lk, ebpf.AttachTCXIngress)
		if terr == nil && target == ifindex {
			defer lk.Close()
			return lk.Update(prog)
		}
		l.log.Info("Replacing the overlay program's stale link", "link-ifindex", target, "ifindex", ifindex, "error", terr)
		err = errors.Join(lk.Unpin(), lk.Close())
		if err != nil {
			return fmt.Errorf("remove stale overlay link: %w", err)
		}
	}
	lk, err := link.AttachTCX(link.TCXOptions{Interface: ifindex, Program: prog, Attach: ebpf.AttachTCXIngress})
	if errors.Is(err, ebpf.ErrNotSupported) {
		return fmt.Errorf("%w: %w", ErrTCXUnsupported, err)
	}
	if err != nil {
		return err
	}
	defer lk.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create link directory: %w", err)
	}
	if err := lk.Pin(path); err != nil {
		return fmt.Errorf("pin overlay link: %w", err)
	}
	return nil
}

// DetachOverlay removes the overlay program's pinned link (native
// routing): endpoint programs loaded afterwards route natively. No link
// is not an error; tc filters go with the device, which the Linux
// datapath deletes.
func (l *Loader) DetachOverlay() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tunnelIfIndex = 0
	lk, err := link.LoadPinnedLink(l.overlayLinkPath(), nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("detach overlay program: %w", err)
	}
	if err := errors.Join(lk.Unpin(), lk.Close()); err != nil {
		return fmt.Errorf("detach overlay program: %w", err)
	}
	return os.RemoveAll(filepath.Dir(l.overlayLinkPath()))
}

// TunnelIfIndex returns the tunnel device endpoint programs encapsulate
// to (0: native routing).
func (l *Loader) TunnelIfIndex() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tunnelIfIndex
}

// tcAttachOverlay puts prog on ifindex's clsact ingress as the filter
// named from_overlay, replacing one already there in one request.
func tcAttachOverlay(ifindex int, prog *ebpf.Program) error {
	qdisc := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{
		LinkIndex: ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT,
	}}
	if err := netlink.QdiscAdd(qdisc); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add clsact qdisc: %w", err)
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: ifindex, Parent: netlink.HANDLE_MIN_INGRESS, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL,
		},
		Name: OverlayProgram, DirectAction: true, Fd: prog.FD(),
	}
	if err := netlink.FilterReplace(f); err != nil {
		return fmt.Errorf("attach tc ingress filter: %w", err)
	}
	return nil
}
