package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/apiary-net/apiary/bpf"
	"github.com/apiary-net/apiary/datapath/maps/ipcachemap"
)

// overlayHooks are the overlay programs by hook of the tunnel device:
// from_overlay on its ingress, to_overlay on its egress.
var overlayHooks = []struct {
	hook   string
	attach ebpf.AttachType
	parent uint32
	name   string
	prog   func(*bpf.OverlayPrograms) *ebpf.Program
}{
	{HookIngress, ebpf.AttachTCXIngress, netlink.HANDLE_MIN_INGRESS, bpf.OverlayProgFromOverlay,
		func(p *bpf.OverlayPrograms) *ebpf.Program { return p.FromOverlay }},
	{HookEgress, ebpf.AttachTCXEgress, netlink.HANDLE_MIN_EGRESS, bpf.OverlayProgToOverlay,
		func(p *bpf.OverlayPrograms) *ebpf.Program { return p.ToOverlay }},
}

// overlayLinkPath is where the overlay program of hook is pinned.
func (l *Loader) overlayLinkPath(hook string) string {
	return filepath.Join(l.root, "links", "overlay", hook)
}

// AttachOverlay loads the overlay programs (bpf/overlay.c) and attaches
// them to the tunnel device ifindex (tunnel routing, docs/datapath.md):
// from_overlay on its ingress, to_overlay on its egress, replacing an
// earlier agent's programs atomically when their pinned links are on
// the same device. Endpoint programs loaded afterwards (Load, Attach)
// encapsulate to this device; those loaded before keep their setting
// until their next Attach.
func (l *Loader) AttachOverlay(ifindex int) error {
	if ifindex <= 0 {
		return fmt.Errorf("attach overlay programs: ifindex must be positive")
	}
	spec, err := bpf.LoadOverlay()
	if err != nil {
		return fmt.Errorf("load overlay programs: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.shared == nil {
		return fmt.Errorf("attach overlay programs: loader not open")
	}
	var progs bpf.OverlayPrograms // only the programs: the maps they use are the shared ones
	opts := &ebpf.CollectionOptions{MapReplacements: map[string]*ebpf.Map{ipcachemap.MapName: l.shared[ipcachemap.MapName]}}
	if err := spec.LoadAndAssign(&progs, opts); err != nil {
		return loadError("load overlay programs", err)
	}
	defer progs.Close()
	for _, h := range overlayHooks {
		if err := l.attachOverlayHook(ifindex, h.hook, h.attach, h.parent, h.name, h.prog(&progs)); err != nil {
			return fmt.Errorf("attach %s to interface %d: %w", h.name, ifindex, err)
		}
	}
	l.tunnelIfIndex = ifindex
	return nil
}

// attachOverlayHook attaches prog to one hook with tcx (or tc as the
// mode says); l.mu is held.
func (l *Loader) attachOverlayHook(ifindex int, hook string, at ebpf.AttachType, parent uint32, name string, prog *ebpf.Program) error {
	if l.mode == AttachTC {
		return tcAttachOverlay(ifindex, parent, name, prog)
	}
	err := l.tcxAttachOverlay(ifindex, hook, at, prog)
	if errors.Is(err, ErrTCXUnsupported) && l.mode == AttachAuto {
		return tcAttachOverlay(ifindex, parent, name, prog)
	}
	return err
}

// tcxAttachOverlay replaces the program of the pinned link when it is on
// ifindex, else attaches a new link and pins it (attachPinnedTCX); l.mu
// is held.
func (l *Loader) tcxAttachOverlay(ifindex int, hook string, at ebpf.AttachType, prog *ebpf.Program) error {
	path := l.overlayLinkPath(hook)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create link directory: %w", err)
	}
	if err := attachPinnedTCX(path, ifindex, at, prog); err != nil {
		return fmt.Errorf("overlay link %s: %w", hook, err)
	}
	return nil
}

// DetachOverlay removes the overlay programs' pinned links (native
// routing): endpoint programs loaded afterwards route natively. No link
// is not an error; tc filters go with the device, which the Linux
// datapath deletes.
func (l *Loader) DetachOverlay() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.tunnelIfIndex = 0
	var errs []error
	for _, h := range overlayHooks {
		errs = append(errs, removePinnedLink(l.overlayLinkPath(h.hook)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach overlay programs: %w", err)
	}
	return os.RemoveAll(filepath.Dir(l.overlayLinkPath(HookIngress)))
}

// TunnelIfIndex returns the tunnel device endpoint programs encapsulate
// to (0: native routing).
func (l *Loader) TunnelIfIndex() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tunnelIfIndex
}

// tcAttachOverlay puts prog on ifindex's clsact hook parent as the
// filter named name, replacing one already there in one request.
func tcAttachOverlay(ifindex int, parent uint32, name string, prog *ebpf.Program) error {
	qdisc := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{
		LinkIndex: ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT,
	}}
	if err := netlink.QdiscAdd(qdisc); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add clsact qdisc: %w", err)
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: ifindex, Parent: parent, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL,
		},
		Name: name, DirectAction: true, Fd: prog.FD(),
	}
	if err := netlink.FilterReplace(f); err != nil {
		return fmt.Errorf("attach tc filter: %w", err)
	}
	return nil
}
