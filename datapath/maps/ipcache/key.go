package ipcache

import (
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/policy/identity"
)

// MapName is the map's name in the programs and its pin name.
const MapName = "ipcache"

// staticPrefix is the number of key bits before the address (pad, family).
const staticPrefix = 32

// Key is struct ipcache_key (bpf/lib/maps.h): the LPM prefix length
// counting the pad and family bytes, the family (4 or 6) and the address
// (IPv4 in the first 4 bytes).
type Key struct {
	Prefixlen uint32
	Pad       [3]uint8
	Family    uint8
	Addr      [16]byte
}

// Value is struct ipcache_value: the identity and unused flags.
type Value struct {
	Identity uint32
	Flags    uint32
}

// NewKey returns the key of prefix p (masked to its length).
func NewKey(p netip.Prefix) (Key, error) {
	if !p.IsValid() {
		return Key{}, fmt.Errorf("ipcache prefix %v is not valid", p)
	}
	p = p.Masked()
	k := Key{Prefixlen: staticPrefix + uint32(p.Bits())}
	if p.Addr().Is4() {
		k.Family = 4
		a := p.Addr().As4()
		copy(k.Addr[:], a[:])
	} else {
		k.Family = 6
		k.Addr = p.Addr().As16()
	}
	return k, nil
}

// hostKey returns the key a program looks addr up with.
func hostKey(addr netip.Addr) (Key, error) {
	return NewKey(netip.PrefixFrom(addr, addr.BitLen()))
}

// Prefix returns the prefix k holds.
func (k Key) Prefix() netip.Prefix {
	bits := int(k.Prefixlen) - staticPrefix
	if k.Family == 4 {
		return netip.PrefixFrom(netip.AddrFrom4([4]byte(k.Addr[:4])), bits)
	}
	return netip.PrefixFrom(netip.AddrFrom16(k.Addr), bits)
}

// NewValue returns the value for identity id.
func NewValue(id identity.NumericIdentity) Value { return Value{Identity: uint32(id)} }
