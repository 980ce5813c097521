package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"github.com/apiary-net/apiary/datapath"
)

// Hook names, the pin names of an endpoint's two links: the tc ingress
// hook of the host-side veth runs from_container, the egress hook
// to_container.
const (
	HookIngress = "ingress"
	HookEgress  = "egress"
)

// ErrTCXUnsupported is returned (wrapped) when the kernel cannot attach
// tcx links and the attach mode is AttachTCX.
var ErrTCXUnsupported = errors.New("tcx attachment needs Linux >= 6.6")

// endpointLinks are an endpoint's attached programs: two tcx links, or
// (tc set) two clsact filters, which live on the interface without pins.
type endpointLinks struct {
	ifindex int
	tc      bool
	ingress link.Link
	egress  link.Link
}

func (el *endpointLinks) close() error {
	if el.tc {
		return nil
	}
	return errors.Join(el.ingress.Close(), el.egress.Close())
}

// LinkDir returns the directory endpoint id's links are pinned in.
func (l *Loader) LinkDir(id uint16) string {
	return filepath.Join(l.root, "links", strconv.Itoa(int(id)))
}

// Attach loads ep's programs and attaches them to ep.IfIndex (the
// loader reads ID, IfIndex, Identity and the enforcement flags). When the
// endpoint's programs are already attached there (by this agent or, via
// the pinned links, by an earlier one) the new programs replace them
// atomically: no packet goes through without a program.
func (l *Loader) Attach(ep datapath.EndpointSpec) error {
	if ep.IfIndex <= 0 {
		return fmt.Errorf("attach endpoint %d: ifindex must be positive", ep.ID)
	}
	progs, err := l.Load(ep)
	if err != nil {
		return err
	}
	defer progs.Close()
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.links[uint16(ep.ID)]
	if el == nil {
		if el, err = l.loadPinnedLinks(uint16(ep.ID)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("attach endpoint %d: %w", ep.ID, err)
		}
	}
	if el == nil && l.mode != AttachTCX {
		if ok, err := tcAttached(ep.IfIndex); err != nil {
			return fmt.Errorf("attach endpoint %d: %w", ep.ID, err)
		} else if ok {
			el = &endpointLinks{ifindex: ep.IfIndex, tc: true}
		}
	}
	if el != nil && el.ifindex == ep.IfIndex && el.tc {
		if err := tcAttach(ep.IfIndex, progs); err != nil {
			return fmt.Errorf("replace endpoint %d programs: %w", ep.ID, err)
		}
		l.links[uint16(ep.ID)] = el
		return nil
	}
	if el != nil && el.ifindex == ep.IfIndex {
		if err := el.ingress.Update(progs.FromContainer); err != nil {
			return fmt.Errorf("replace endpoint %d ingress program: %w", ep.ID, err)
		}
		if err := el.egress.Update(progs.ToContainer); err != nil {
			return fmt.Errorf("replace endpoint %d egress program: %w", ep.ID, err)
		}
		l.links[uint16(ep.ID)] = el
		return nil
	}
	if el != nil { // the endpoint's interface changed: drop the stale links
		l.log.Info("Endpoint interface changed, re-attaching", "endpoint", ep.ID, "old-ifindex", el.ifindex, "ifindex", ep.IfIndex)
		if err := l.unpinLinks(uint16(ep.ID), el); err != nil {
			return fmt.Errorf("attach endpoint %d: %w", ep.ID, err)
		}
	}
	if el, err = l.attachFresh(ep, progs); err != nil {
		return err
	}
	l.links[uint16(ep.ID)] = el
	return nil
}

// attachFresh attaches progs to an interface without apiary's programs,
// with tcx or tc as the mode says.
func (l *Loader) attachFresh(ep datapath.EndpointSpec, progs *Programs) (*endpointLinks, error) {
	if l.mode != AttachTC {
		el, err := l.attachNew(ep, progs)
		if l.mode == AttachTCX || !errors.Is(err, ErrTCXUnsupported) {
			return el, err
		}
		l.log.Info("Kernel has no tcx, attaching with tc clsact", "endpoint", ep.ID)
	}
	if err := tcAttach(ep.IfIndex, progs); err != nil {
		return nil, fmt.Errorf("attach endpoint %d: %w", ep.ID, err)
	}
	return &endpointLinks{ifindex: ep.IfIndex, tc: true}, nil
}

func (l *Loader) attachNew(ep datapath.EndpointSpec, progs *Programs) (*endpointLinks, error) {
	dir := l.LinkDir(uint16(ep.ID))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("attach endpoint %d: create link directory: %w", ep.ID, err)
	}
	attach := func(p *ebpf.Program, at ebpf.AttachType, hook string) (link.Link, error) {
		lk, err := link.AttachTCX(link.TCXOptions{Interface: ep.IfIndex, Program: p, Attach: at})
		if errors.Is(err, ebpf.ErrNotSupported) {
			return nil, fmt.Errorf("attach endpoint %d %s: %w: %w", ep.ID, hook, ErrTCXUnsupported, err)
		}
		if err != nil {
			return nil, fmt.Errorf("attach endpoint %d %s: %w", ep.ID, hook, err)
		}
		if err := lk.Pin(filepath.Join(dir, hook)); err != nil {
			lk.Close()
			return nil, fmt.Errorf("pin endpoint %d %s link: %w", ep.ID, hook, err)
		}
		return lk, nil
	}
	in, err := attach(progs.FromContainer, ebpf.AttachTCXIngress, HookIngress)
	if err != nil {
		return nil, err
	}
	out, err := attach(progs.ToContainer, ebpf.AttachTCXEgress, HookEgress)
	if err != nil {
		in.Unpin()
		in.Close()
		return nil, err
	}
	return &endpointLinks{ifindex: ep.IfIndex, ingress: in, egress: out}, nil
}

// loadPinnedLinks opens endpoint id's pinned links; os.ErrNotExist when
// there are none.
func (l *Loader) loadPinnedLinks(id uint16) (*endpointLinks, error) {
	dir := l.LinkDir(id)
	in, err := link.LoadPinnedLink(filepath.Join(dir, HookIngress), nil)
	if err != nil {
		return nil, fmt.Errorf("open pinned ingress link: %w", err)
	}
	out, err := link.LoadPinnedLink(filepath.Join(dir, HookEgress), nil)
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("open pinned egress link: %w", err)
	}
	el := &endpointLinks{ingress: in, egress: out}
	ifIn, err := tcxTarget(in, ebpf.AttachTCXIngress)
	if err == nil {
		var ifOut int
		ifOut, err = tcxTarget(out, ebpf.AttachTCXEgress)
		if err == nil && ifOut != ifIn {
			err = fmt.Errorf("pinned links are on interfaces %d and %d", ifIn, ifOut)
		}
	}
	if err != nil {
		el.close()
		return nil, err
	}
	el.ifindex = ifIn
	return el, nil
}

// tcxTarget returns the interface a tcx link is attached to, checking its
// attach type. A link whose interface was deleted reports ifindex 0.
func tcxTarget(lk link.Link, want ebpf.AttachType) (int, error) {
	info, err := lk.Info()
	if err != nil {
		return 0, fmt.Errorf("read link info: %w", err)
	}
	tcx := info.TCX()
	if tcx == nil {
		return 0, fmt.Errorf("pinned link is a %v link, not tcx", info.Type)
	}
	if ebpf.AttachType(tcx.AttachType) != want {
		return 0, fmt.Errorf("pinned link has attach type %v, want %v", ebpf.AttachType(tcx.AttachType), want)
	}
	return int(tcx.Ifindex), nil
}

// Restore reopens endpoint id's pinned links after an agent restart and
// checks they are still attached to ifindex, so the endpoint keeps its
// programs without a reload. The next regeneration's Attach replaces them.
// When they are not attached where expected (no pinned links, or links on
// another or a deleted interface) the error wraps datapath.ErrNotAttached.
func (l *Loader) Restore(id uint16, ifindex int) error {
	el, err := l.loadPinnedLinks(id)
	if errors.Is(err, os.ErrNotExist) && l.mode != AttachTCX {
		ok, terr := tcAttached(ifindex)
		if terr != nil {
			return fmt.Errorf("restore endpoint %d programs: %w", id, terr)
		}
		if ok {
			el, err = &endpointLinks{ifindex: ifindex, tc: true}, nil
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("restore endpoint %d programs: %w: %w", id, datapath.ErrNotAttached, err)
	}
	if err != nil {
		return fmt.Errorf("restore endpoint %d programs: %w", id, err)
	}
	if el.ifindex != ifindex {
		el.close()
		return fmt.Errorf("restore endpoint %d programs: %w: pinned links are on ifindex %d (0: interface gone), want %d",
			id, datapath.ErrNotAttached, el.ifindex, ifindex)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.links[id]; old != nil {
		old.close()
	}
	l.links[id] = el
	return nil
}

// Detach detaches endpoint id's programs and removes its pinned links and
// policy map. Detaching an endpoint without programs is not an error.
func (l *Loader) Detach(id uint16) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.links[id]
	delete(l.links, id)
	if el == nil {
		var err error
		if el, err = l.loadPinnedLinks(id); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.log.Warn("Unreadable pinned links, removing them", "endpoint", id, "error", err)
		}
	}
	var errs []error
	if el != nil {
		errs = append(errs, l.unpinLinks(id, el))
	}
	errs = append(errs, os.RemoveAll(l.LinkDir(id)), l.removePolicyMap(id))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach endpoint %d: %w", id, err)
	}
	return nil
}

// unpinLinks unpins and closes el: the last reference goes, so the
// programs are detached.
func (l *Loader) unpinLinks(id uint16, el *endpointLinks) error {
	if el.tc {
		return tcDetach(el.ifindex)
	}
	return errors.Join(el.ingress.Unpin(), el.egress.Unpin(), el.close())
}

// removePinnedLink detaches the link pinned at pin and removes the pin;
// none there is not an error.
func removePinnedLink(pin string) error {
	lk, err := link.LoadPinnedLink(pin, nil)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open pinned link %s: %w", pin, err)
	}
	return errors.Join(lk.Unpin(), lk.Close())
}
