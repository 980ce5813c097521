package lbmap

import "github.com/apiary-net/apiary/datapath"

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
	v4    uint8
}

// keyOf returns a's key.
func keyOf(a datapath.L3n4Addr) addrKey {
	k := addrKey{addr: a.Addr.As16(), port: a.Port, proto: a.Proto}
	if a.Addr.Is4() {
		k.v4 = 1
	}
	return k
}
