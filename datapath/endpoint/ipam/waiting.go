package ipam

import (
	"errors"
	"fmt"
	"net/netip"
)

// NewWaiting returns an allocator whose CIDRs are not known yet
// (--ipam=kubernetes before the Node has spec.podCIDRs), in the
// restoring state; what says what it waits for ("spec.podCIDRs of node
// a"). Until SetCIDRs, Allocate fails with ErrWaitingForCIDR and
// AllocateIP (a restored endpoint's address) holds the address, checked
// against the CIDRs when they come.
func NewWaiting(what string) *IPAM {
	if what == "" {
		panic("ipam.NewWaiting: empty description")
	}
	return &IPAM{restoring: true, waiting: what, held: map[netip.Addr]string{}, ready: make(chan struct{})}
}

// Ready is closed once the allocator has its CIDRs: at once for New, at
// SetCIDRs for NewWaiting.
func (i *IPAM) Ready() <-chan struct{} { return i.ready }

// Waiting returns what the allocator waits for; "" once it has CIDRs.
func (i *IPAM) Waiting() string {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.waiting
}

// SetCIDRs gives a waiting allocator its CIDRs (at least one). The
// addresses held meanwhile are reserved in them; one that does not fit
// (outside the CIDR, or reserved) stays with its owner outside the
// pools, and is named in the returned error. A bad CIDR leaves the
// allocator waiting.
func (i *IPAM) SetCIDRs(v4, v6 netip.Prefix) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.waiting == "" {
		return errors.New("set pod CIDRs: the allocator has its CIDRs already")
	}
	if !v4.IsValid() && !v6.IsValid() {
		return fmt.Errorf("set pod CIDRs: %w", ErrNoCIDR)
	}
	p4, p6, err := newPools(v4, v6)
	if err != nil {
		return fmt.Errorf("set pod CIDRs: %w", err)
	}
	i.v4, i.v6, i.waiting = p4, p6, ""
	close(i.ready)
	var errs []error
	for ip, owner := range i.held {
		p, err := i.poolOf(ip)
		if err == nil {
			err = p.allocateIP(ip, owner)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("address of %s: %w", owner, err))
		}
	}
	i.held = nil
	return errors.Join(errs...)
}

// hold reserves ip while waiting. The caller locks.
func (i *IPAM) hold(ip netip.Addr, owner string) error {
	if other, ok := i.held[ip]; ok {
		return fmt.Errorf("allocate %s: %w by %s", ip, ErrInUse, other)
	}
	i.held[ip] = owner
	return nil
}

// unhold releases a held address. The caller locks.
func (i *IPAM) unhold(ip netip.Addr) error {
	if _, ok := i.held[ip]; !ok {
		return fmt.Errorf("release %s: %w", ip, ErrNotAllocated)
	}
	delete(i.held, ip)
	return nil
}
