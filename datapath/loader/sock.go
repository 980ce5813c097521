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

// sockHook is a program of bpf/sock.c and the cgroup hook it attaches to.
type sockHook struct {
	prog   string
	attach ebpf.AttachType
}

// sockHooks are the socket-level balancer's programs.
var sockHooks = []sockHook{
	{"sock_connect4", ebpf.AttachCGroupInet4Connect},
	{"sock_connect6", ebpf.AttachCGroupInet6Connect},
	{"sock_sendmsg4", ebpf.AttachCGroupUDP4Sendmsg},
	{"sock_sendmsg6", ebpf.AttachCGroupUDP6Sendmsg},
	{"sock_recvmsg4", ebpf.AttachCGroupUDP4Recvmsg},
	{"sock_recvmsg6", ebpf.AttachCGroupUDP6Recvmsg},
	{"sock_getpeername4", ebpf.AttachCgroupInet4GetPeername},
	{"sock_getpeername6", ebpf.AttachCgroupInet6GetPeername},
}

// bindHooks are the bind protection's programs.
var bindHooks = []sockHook{
	{"sock_post_bind4", ebpf.AttachCGroupInet4PostBind},
	{"sock_post_bind6", ebpf.AttachCGroupInet6PostBind},
}

// SockLinkDir is the directory the socket-level balancer's links are
// pinned in.
func (l *Loader) SockLinkDir() string { return filepath.Join(l.root, "links", "sock") }

// AttachSockLB loads the socket-level balancer with the shared
// load-balancing maps and attaches it to the cgroup v2 at cgroupPath:
// every process in it or below it, in any network namespace; with
// hostNetnsCookie not 0 only the sockets of the network namespace of
// that cookie (netnsutil.Cookie) are translated, the node's, as
// --bpf-lb-sock-hostns-only asks, leaving the pods' to their endpoint
// programs. Links are pinned under SockLinkDir, so it keeps balancing
// while the agent restarts. Links pinned by an earlier run are updated in place to the
// new programs (they must be on the same cgroup: DetachSockLB first to
// move it).
func (l *Loader) AttachSockLB(cgroupPath string, hostNetnsCookie uint64) error {
	return l.attachSockHooks(cgroupPath, "socket load balancer", map[string]any{
		bpf.SockVarHostNetnsCookie:        hostNetnsCookie,
		bpf.SockVarServiceNoBackendReject: l.noBackendReject(),
	}, sockHooks)
}

// attachSockHooks loads bpf/sock.c with its constants vars and the
// shared maps, and attaches hooks of it to the cgroup at cgroupPath (what
// names them in errors).
func (l *Loader) attachSockHooks(cgroupPath, what string, vars map[string]any, hooks []sockHook) error {
	spec, err := bpf.LoadSock()
	if err != nil {
		return fmt.Errorf("attach %s: %w", what, err)
	}
	if err := setVariables(spec, vars); err != nil {
		return fmt.Errorf("attach %s: %w", what, err)
	}
	coll, err := l.newSharedCollection(spec, "load "+what)
	if err != nil {
		return err
	}
	defer coll.Close()
	if err := os.MkdirAll(l.SockLinkDir(), 0o700); err != nil {
		return fmt.Errorf("attach %s: %w", what, err)
	}
	for _, h := range hooks {
		if err := l.attachSockHook(cgroupPath, h.prog, h.attach, coll.Programs[h.prog]); err != nil {
			return fmt.Errorf("attach %s to %s: %w", what, cgroupPath, err)
		}
	}
	return nil
}

func (l *Loader) attachSockHook(cgroupPath, name string, at ebpf.AttachType, prog *ebpf.Program) error {
	pin := filepath.Join(l.SockLinkDir(), name)
	if old, err := link.LoadPinnedLink(pin, nil); err == nil {
		defer old.Close()
		if err := old.Update(prog); err != nil {
			return fmt.Errorf("update %s: %w", name, err)
		}
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("open pinned %s: %w", name, err)
	}
	lk, err := link.AttachCgroup(link.CgroupOptions{Path: cgroupPath, Attach: at, Program: prog})
	if err != nil {
		return fmt.Errorf("attach %s: %w", name, err)
	}
	defer lk.Close()
	if err := lk.Pin(pin); err != nil {
		return fmt.Errorf("pin %s: %w", name, err)
	}
	return nil
}

// AttachBindProtection attaches the node-port bind protection (Cilium's
// --node-port-bind-protection) to the cgroup v2 at cgroupPath: a bind of
// a socket of the network namespace of cookie nodeNetnsCookie (the
// node's: netnsutil.Cookie) to the address and port of a NodePort,
// ExternalIPs or LoadBalancer frontend fails with EADDRINUSE, the
// unspecified and loopback addresses taking the NodePort's. Its links are
// pinned beside the socket-level balancer's, updated in place by a
// later attach.
func (l *Loader) AttachBindProtection(cgroupPath string, nodeNetnsCookie uint64) error {
	return l.attachSockHooks(cgroupPath, "bind protection", map[string]any{bpf.SockVarNodeNetnsCookie: nodeNetnsCookie}, bindHooks)
}

// DetachBindProtection removes the bind protection's pinned links; none
// attached is not an error.
func (l *Loader) DetachBindProtection() error {
	var errs []error
	for _, h := range bindHooks {
		errs = append(errs, removePinnedLink(filepath.Join(l.SockLinkDir(), h.prog)))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach bind protection: %w", err)
	}
	return nil
}

// DetachSockLB detaches the socket-level balancer and its bind
// protection (removes their pinned links); none attached is not an error.
func (l *Loader) DetachSockLB() error {
	var errs []error
	for _, h := range append(sockHooks[:len(sockHooks):len(sockHooks)], bindHooks...) {
		errs = append(errs, removePinnedLink(filepath.Join(l.SockLinkDir(), h.prog)))
	}
	if err := os.Remove(l.SockLinkDir()); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("detach socket load balancer: %w", err)
	}
	return nil
}
