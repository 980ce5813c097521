package ipam

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
)

// Errors of the allocator; the returned errors wrap them.
var (
	// ErrNotInCIDR: the address is not in the pod CIDR of its family.
	ErrNotInCIDR = errors.New("not in the pod CIDR")
	// ErrReserved: the address is the network, broadcast or router
	// address.
	ErrReserved = errors.New("reserved")
	// ErrInUse: the address is allocated already.
	ErrInUse = errors.New("in use")
	// ErrFull: every address of the CIDR is allocated.
	ErrFull = errors.New("no free address")
	// ErrNoCIDR: the node has no pod CIDR of the address's family.
	ErrNoCIDR = errors.New("no pod CIDR")
	// ErrRestoring: new allocations wait until the restored endpoints'
	// addresses are reserved.
	ErrRestoring = errors.New("restoring endpoints: new allocations wait")
	// ErrWaitingForCIDR: the node's pod CIDRs are not known yet
	// (NewWaiting); a retry later may succeed.
	ErrWaitingForCIDR = errors.New("waiting for the node's pod CIDRs")
	// ErrNotAllocated: released address was not allocated.
	ErrNotAllocated = errors.New("not allocated")
)

// pool allocates the addresses of one CIDR. It is not safe for
// concurrent use; IPAM locks.
type pool struct {
	cidr     netip.Prefix
	router   netip.Addr
	last     netip.Addr // the broadcast address (IPv4) or the CIDR's last
	owners   map[netip.Addr]string
	next     netip.Addr // where the search for a free address starts
	capacity *big.Int   // usable addresses
}

func newPool(cidr netip.Prefix) (*pool, error) {
	if cidr.Masked() != cidr {
		return nil, fmt.Errorf("pod CIDR %s has host bits set", cidr)
	}
	hostBits := cidr.Addr().BitLen() - cidr.Bits()
	reserved := 2 // network and router
	if cidr.Addr().Is4() {
		reserved = 3 // and broadcast
	}
	capacity := new(big.Int).Lsh(big.NewInt(1), uint(hostBits))
	capacity.Sub(capacity, big.NewInt(int64(reserved)))
	if capacity.Sign() <= 0 {
		return nil, fmt.Errorf("pod CIDR %s is too small: no address left after the network, router and broadcast addresses", cidr)
	}
	p := &pool{cidr: cidr, router: cidr.Addr().Next(), owners: map[netip.Addr]string{}, capacity: capacity}
	p.last = lastAddr(cidr)
	p.next = p.router.Next()
	return p, nil
}

// lastAddr returns the last address of a prefix.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// check says why ip cannot be allocated.
func (p *pool) check(ip netip.Addr) error {
	switch {
	case !p.cidr.Contains(ip):
		return fmt.Errorf("%s: %w %s", ip, ErrNotInCIDR, p.cidr)
	case ip == p.cidr.Addr():
		return fmt.Errorf("%s: %w (the network address of %s)", ip, ErrReserved, p.cidr)
	case ip == p.router:
		return fmt.Errorf("%s: %w (the router address of %s)", ip, ErrReserved, p.cidr)
	case ip.Is4() && ip == p.last:
		return fmt.Errorf("%s: %w (the broadcast address of %s)", ip, ErrReserved, p.cidr)
	}
	if owner, ok := p.owners[ip]; ok {
		return fmt.Errorf("%s: %w by %s", ip, ErrInUse, owner)
	}
	return nil
}

func (p *pool) allocateIP(ip netip.Addr, owner string) error {
	if err := p.check(ip); err != nil {
		return err
	}
	p.owners[ip] = owner
	return nil
}

// allocateNext takes the first free address from the cursor on,
// wrapping around once.
func (p *pool) allocateNext(owner string) (netip.Addr, error) {
	if big.NewInt(int64(len(p.owners))).Cmp(p.capacity) >= 0 {
		return netip.Addr{}, fmt.Errorf("%s: %w", p.cidr, ErrFull)
	}
	ip := p.next
	for {
		if !p.cidr.Contains(ip) {
			ip = p.router.Next()
		}
		if p.check(ip) == nil {
			break
		}
		ip = ip.Next()
	}
	p.owners[ip] = owner
	p.next = ip.Next()
	return ip, nil
}

func (p *pool) release(ip netip.Addr) error {
	if _, ok := p.owners[ip]; !ok {
		return fmt.Errorf("release %s: %w", ip, ErrNotAllocated)
	}
	delete(p.owners, ip)
	return nil
}
