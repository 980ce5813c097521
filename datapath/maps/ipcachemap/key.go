package ipcachemap

import (
	"fmt"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
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

// Value is struct ipcache_value: the identity, the IPsec key index, the
// tunnel peer's family (0 none, 4, 6) and address.
type Value struct {
	Identity     uint32
	EncryptKey   uint8
	TunnelFamily uint8
	Pad          uint16
	TunnelPeer   [16]byte
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

// NewValue returns the value for identity id without tunnel peer.
func NewValue(id identity.NumericIdentity) Value { return Value{Identity: uint32(id)} }

// entryValue returns e's map value.
func entryValue(e datapath.IPCacheMapEntry) Value {
	v := NewValue(e.Identity)
	v.EncryptKey = e.EncryptKey
	switch {
	case e.TunnelPeer.Is4():
		v.TunnelFamily = 4
		a := e.TunnelPeer.As4()
		copy(v.TunnelPeer[:], a[:])
	case e.TunnelPeer.IsValid():
		v.TunnelFamily = 6
		v.TunnelPeer = e.TunnelPeer.As16()
	}
	return v
}

// entry returns the entry of k and v.
func entry(k Key, v Value) datapath.IPCacheMapEntry {
	e := datapath.IPCacheMapEntry{Prefix: k.Prefix(), Identity: identity.NumericIdentity(v.Identity), EncryptKey: v.EncryptKey}
	switch v.TunnelFamily {
	case 4:
		e.TunnelPeer = netip.AddrFrom4([4]byte(v.TunnelPeer[:4]))
	case 6:
		e.TunnelPeer = netip.AddrFrom16(v.TunnelPeer)
	}
	return e
}
