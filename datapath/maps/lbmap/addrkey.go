package lbmap

import (
	"encoding/binary"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
)

// addrKey is an address, port and protocol as the key of the writer's
// Go maps (frontends, backends by address, a backend's frontends): 20
// bytes without a pointer, hashed and compared as plain memory, where a
// datapath.L3n4Addr (netip.Addr holds its zone as a pointer) is 32 bytes
// hashed field by field. parse drops zones (the maps hold none), so two
// addresses have the same key exactly when they are equal.
type addrKey struct {
	addr  [16]byte
	port  uint16
	proto uint8
	// v4 is keyV4 for an IPv4 address, plus keyInternal for a
	// frontend's internal scope (one byte: a member stays 32 bytes).
	v4 uint8
}

const (
	keyV4       uint8 = 1
	keyInternal uint8 = 2
)

// keyOf returns a's key.
func keyOf(a datapath.L3n4Addr) addrKey {
	k := addrKey{addr: a.Addr.As16(), port: a.Port, proto: a.Proto}
	if a.Addr.Is4() {
		k.v4 = keyV4
	}
	if a.Scope == datapath.ScopeInternal {
		k.v4 |= keyInternal
	}
	return k
}

// frontendKey returns the key of frontend fe as parse makes it (no
// IPv4-mapped address, no zone).
func frontendKey(fe datapath.L3n4Addr) addrKey {
	fe.Addr = fe.Addr.Unmap().WithZone("")
	return keyOf(fe)
}

// compareKeys orders keys as compareL3n4 orders their addresses (without
// zones): IPv4 before IPv6, then by address, port and protocol.
// (A frontend's internal scope comes after its external one.)
func compareKeys(a, b addrKey) int {
	if fa, fb := a.v4&keyV4, b.v4&keyV4; fa != fb {
		return int(fb) - int(fa)
	}
	if c := orderOf(&a.addr, a.port, a.proto).compare(orderOf(&b.addr, b.port, b.proto)); c != 0 {
		return c
	}
	return int(a.v4&keyInternal) - int(b.v4&keyInternal)
}

// keyLess reports whether compareKeys(*a, *b) < 0, reading the keys
// where they are.
func keyLess(a, b *addrKey) bool {
	if a.v4 != b.v4 {
		return compareKeys(*a, *b) < 0
	}
	return orderOf(&a.addr, a.port, a.proto).less(orderOf(&b.addr, b.port, b.proto))
}

// keyOrder is a key's place in the order of compareKeys among the keys
// of one family, as three numbers (two big-endian halves of the
// address, then port and protocol): cheaper to compare than the bytes.
type keyOrder struct {
	hi, lo uint64
	tail   uint32
}

// orderOf returns the order of address a16 with port and proto.
func orderOf(a16 *[16]byte, port uint16, proto uint8) keyOrder {
	return keyOrder{
		hi:   binary.BigEndian.Uint64(a16[:8]),
		lo:   binary.BigEndian.Uint64(a16[8:]),
		tail: uint32(port)<<8 | uint32(proto),
	}
}

func (o keyOrder) less(p keyOrder) bool {
	if o.hi != p.hi {
		return o.hi < p.hi
	}
	if o.lo != p.lo {
		return o.lo < p.lo
	}
	return o.tail < p.tail
}

func (o keyOrder) compare(p keyOrder) int {
	switch {
	case o == p:
		return 0
	case o.less(p):
		return -1
	}
	return 1
}

func (k addrKey) is4() bool { return k.v4&keyV4 != 0 }

// scope returns the frontend scope of k.
func (k addrKey) scope() uint8 {
	if k.v4&keyInternal != 0 {
		return datapath.ScopeInternal
	}
	return datapath.ScopeExternal
}

// l3n4 returns the address k is the key of.
func (k addrKey) l3n4() datapath.L3n4Addr {
	a := netip.AddrFrom16(k.addr)
	if k.is4() {
		a = a.Unmap()
	}
	return datapath.L3n4Addr{Addr: a, Port: k.port, Proto: k.proto, Scope: k.scope()}
}

func (k addrKey) String() string { return k.l3n4().String() }
