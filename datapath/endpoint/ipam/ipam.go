package ipam

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"sync"
)

// IPAM allocates endpoint addresses from the node's pod CIDRs. It is
// safe for concurrent use.
type IPAM struct {
	mu        sync.Mutex
	v4, v6    *pool
	restoring bool
	// waiting says what a waiting allocator (NewWaiting) waits for; ""
	// once it has its CIDRs. held are the addresses reserved meanwhile.
	waiting string
	held    map[netip.Addr]string
	ready   chan struct{} // closed once the allocator has its CIDRs
}

// New returns an allocator of the CIDRs v4 and v6 (either may be the
// zero Prefix: that family has no addresses), in the restoring state.
func New(v4, v6 netip.Prefix) (*IPAM, error) {
	i := &IPAM{restoring: true, ready: make(chan struct{})}
	close(i.ready)
	var err error
	if i.v4, i.v6, err = newPools(v4, v6); err != nil {
		return nil, fmt.Errorf("new ipam: %w", err)
	}
	return i, nil
}

// newPools returns the pools of the CIDRs that are valid.
func newPools(v4, v6 netip.Prefix) (p4, p6 *pool, err error) {
	if v4.IsValid() {
		if !v4.Addr().Is4() {
			return nil, nil, fmt.Errorf("IPv4 pod CIDR %s is not IPv4", v4)
		}
		if p4, err = newPool(v4); err != nil {
			return nil, nil, err
		}
	}
	if v6.IsValid() {
		if !v6.Addr().Is6() || v6.Addr().Is4In6() {
			return nil, nil, fmt.Errorf("IPv6 pod CIDR %s is not IPv6", v6)
		}
		if p6, err = newPool(v6); err != nil {
			return nil, nil, err
		}
	}
	return p4, p6, nil
}

// CIDRs returns the pod CIDRs (invalid when the family has none).
func (i *IPAM) CIDRs() (v4, v6 netip.Prefix) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.v4 != nil {
		v4 = i.v4.cidr
	}
	if i.v6 != nil {
		v6 = i.v6.cidr
	}
	return v4, v6
}

// Routers returns the router (gateway) addresses endpoints route
// through (invalid when the family has no CIDR).
func (i *IPAM) Routers() (v4, v6 netip.Addr) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.v4 != nil {
		v4 = i.v4.router
	}
	if i.v6 != nil {
		v6 = i.v6.router
	}
	return v4, v6
}

// RestoreDone ends the restoring state: Allocate hands out addresses.
func (i *IPAM) RestoreDone() {
	i.mu.Lock()
	defer i.mu.Unlock()
	i.restoring = false
}

func (i *IPAM) poolOf(ip netip.Addr) (*pool, error) {
	ip = ip.Unmap()
	switch {
	case ip.Is4() && i.v4 != nil:
		return i.v4, nil
	case ip.Is6() && i.v6 != nil:
		return i.v6, nil
	case ip.Is4():
		return nil, fmt.Errorf("%s: %w of family IPv4", ip, ErrNoCIDR)
	default:
		return nil, fmt.Errorf("%s: %w of family IPv6", ip, ErrNoCIDR)
	}
}

// AllocateIP reserves ip for owner: an explicitly requested address or
// a restored endpoint's. It may be called while restoring.
func (i *IPAM) AllocateIP(ip netip.Addr, owner string) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.waiting != "" {
		return i.hold(ip.Unmap(), owner)
	}
	p, err := i.poolOf(ip)
	if err != nil {
		return fmt.Errorf("allocate %w", err)
	}
	if err := p.allocateIP(ip.Unmap(), owner); err != nil {
		return fmt.Errorf("allocate %w", err)
	}
	return nil
}

// Allocate hands owner the next free address of each family the node
// has a CIDR of; wantV4 and wantV6 say which families to allocate. On
// an error nothing is allocated.
func (i *IPAM) Allocate(owner string, wantV4, wantV6 bool) (v4, v6 netip.Addr, err error) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.waiting != "" {
		return v4, v6, fmt.Errorf("allocate: %w (%s)", ErrWaitingForCIDR, i.waiting)
	}
	if i.restoring {
		return v4, v6, fmt.Errorf("allocate: %w", ErrRestoring)
	}
	if wantV4 {
		if i.v4 == nil {
			return v4, v6, fmt.Errorf("allocate IPv4: %w of family IPv4", ErrNoCIDR)
		}
		if v4, err = i.v4.allocateNext(owner); err != nil {
			return netip.Addr{}, v6, fmt.Errorf("allocate IPv4: %w", err)
		}
	}
	if wantV6 {
		if i.v6 == nil {
			err = fmt.Errorf("allocate IPv6: %w of family IPv6", ErrNoCIDR)
		} else if v6, err = i.v6.allocateNext(owner); err != nil {
			err = fmt.Errorf("allocate IPv6: %w", err)
		}
		if err != nil {
			if v4.IsValid() {
				_ = i.v4.release(v4)
			}
			return netip.Addr{}, netip.Addr{}, err
		}
	}
	return v4, v6, nil
}

// Release frees addresses; invalid addresses are skipped. Every address
// is released that can be; the errors are joined.
func (i *IPAM) Release(ips ...netip.Addr) error {
	i.mu.Lock()
	defer i.mu.Unlock()
	var errs []error
	for _, ip := range ips {
		if !ip.IsValid() {
			continue
		}
		if i.waiting != "" {
			errs = append(errs, i.unhold(ip.Unmap()))
			continue
		}
		p, err := i.poolOf(ip)
		if err == nil {
			err = p.release(ip.Unmap())
		} else {
			err = fmt.Errorf("release %w", err)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Allocated returns the allocated addresses and their owners.
func (i *IPAM) Allocated() map[netip.Addr]string {
	i.mu.Lock()
	defer i.mu.Unlock()
	out := maps.Clone(i.held)
	if out == nil {
		out = map[netip.Addr]string{}
	}
	for _, p := range []*pool{i.v4, i.v6} {
		if p != nil {
			maps.Copy(out, p.owners)
		}
	}
	return out
}
