package loader

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AttachMode chooses how programs are attached to an interface.
type AttachMode int

// Attach modes.
const (
	// AttachAuto uses tcx, or tc clsact filters when the kernel has no
	// tcx (Linux < 6.6).
	AttachAuto AttachMode = iota
	// AttachTCX uses tcx links only.
	AttachTCX
	// AttachTC uses tc clsact bpf filters only (direct action, priority 1,
	// handle 1, as Cilium installs them).
	AttachTC
)

// Option configures a Loader.
type Option func(*Loader)

// WithAttachMode sets the attach mode (default AttachAuto).
func WithAttachMode(m AttachMode) Option { return func(l *Loader) { l.mode = m } }

// WithLBMapMax sizes the load-balancing maps (--bpf-lb-map-max; 0: the
// programs' default, 65536).
func WithLBMapMax(n uint32) Option { return func(l *Loader) { l.lbMapMax = n } }

// DefaultServiceLoopback is the source of hairpinned flows (Cilium's
// --ipv4-service-loopback-address default).
var DefaultServiceLoopback = netip.MustParseAddr("169.254.42.1")

// WithServiceLoopback sets the address a pod reaching itself through a
// service appears to come from (--ipv4-service-loopback-address; default
// DefaultServiceLoopback). The invalid Addr turns hairpin translation
// off; New refuses any other address that is not IPv4 unicast.
func WithServiceLoopback(a netip.Addr) Option { return func(l *Loader) { l.loopback = a } }

// DefaultServiceLoopback6 is the IPv6 source of hairpinned flows
// (--ipv6-service-loopback-address): an address of the discard-only
// prefix 100::/64 (RFC 6666), which no host has, and which a pod's
// answers reach through its default route (a link-local one would be
// on-link, and never answered by neighbour discovery).
var DefaultServiceLoopback6 = netip.MustParseAddr("100::42:1")

// WithServiceLoopback6 sets the IPv6 address a pod reaching itself
// through a service appears to come from (default
// DefaultServiceLoopback6); the invalid Addr turns IPv6 hairpin
// translation off.
func WithServiceLoopback6(a netip.Addr) Option { return func(l *Loader) { l.loopback6 = a } }

// WithServiceNoBackendResponse sets what a packet to a service without
// backends gets (Cilium's --service-no-backend-response): reject (the
// default) answers it with an ICMP port unreachable from the frontend,
// and the socket-level balancer refuses the connect or sendmsg with
// ECONNREFUSED, as kube-proxy's REJECT; drop drops it (EPERM at the
// socket).
func WithServiceNoBackendResponse(reject bool) Option {
	return func(l *Loader) { l.noBackendDrop = !reject }
}

// WithExternalClusterIP makes the NodePort programs balance ClusterIP
// frontends for traffic from outside too (Cilium's
// --bpf-lb-external-clusterip), for routers that send the service CIDR
// to the nodes.
func WithExternalClusterIP(on bool) Option { return func(l *Loader) { l.externalClusterIP = on } }

// tcFilter is the bpf filter of hook (HookIngress or HookEgress) on
// ifindex, running prog (nil to name the filter for deletion).
func tcFilter(ifindex int, hook string, prog *ebpf.Program) *netlink.BpfFilter {
	parent, name := uint32(netlink.HANDLE_MIN_INGRESS), "from_container"
	if hook == HookEgress {
		parent, name = netlink.HANDLE_MIN_EGRESS, "to_container"
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: ifindex, Parent: parent, Handle: 1, Priority: 1, Protocol: unix.ETH_P_ALL,
		},
		Name: name, DirectAction: true,
	}
	if prog != nil {
		f.Fd = prog.FD()
	}
	return f
}

// tcAttach puts progs on ifindex as clsact filters, creating the clsact
// qdisc if needed. A filter already there is replaced in one netlink
// request, so no packet goes through without a program.
func tcAttach(ifindex int, progs *Programs) error {
	qdisc := &netlink.Clsact{QdiscAttrs: netlink.QdiscAttrs{
		LinkIndex: ifindex, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT,
	}}
	if err := netlink.QdiscAdd(qdisc); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("add clsact qdisc: %w", err)
	}
	if err := netlink.FilterReplace(tcFilter(ifindex, HookIngress, progs.FromContainer)); err != nil {
		return fmt.Errorf("attach tc ingress filter: %w", err)
	}
	if err := netlink.FilterReplace(tcFilter(ifindex, HookEgress, progs.ToContainer)); err != nil {
		return fmt.Errorf("attach tc egress filter: %w", err)
	}
	return nil
}

// tcDetach removes the filters of tcAttach; missing ones (or a missing
// interface) are not an error.
func tcDetach(ifindex int) error {
	var errs []error
	for _, hook := range []string{HookIngress, HookEgress} {
		err := netlink.FilterDel(tcFilter(ifindex, hook, nil))
		if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENODEV) && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("remove tc %s filter: %w", hook, err))
		}
	}
	return errors.Join(errs...)
}

// tcAttached reports whether both of apiary's filters are on ifindex.
func tcAttached(ifindex int) (bool, error) {
	lk, err := netlink.LinkByIndex(ifindex)
	if err != nil {
		var notFound netlink.LinkNotFoundError
		if errors.As(err, &notFound) {
			return false, nil
		}
		return false, fmt.Errorf("look up interface %d: %w", ifindex, err)
	}
	for _, hook := range []string{HookIngress, HookEgress} {
		want := tcFilter(ifindex, hook, nil)
		filters, err := netlink.FilterList(lk, want.Parent)
		if err != nil {
			return false, fmt.Errorf("list tc %s filters: %w", hook, err)
		}
		found := false
		for _, f := range filters {
			bf, ok := f.(*netlink.BpfFilter)
			found = found || ok && bf.Name == want.Name && bf.Handle == want.Handle && bf.Priority == want.Priority
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}
