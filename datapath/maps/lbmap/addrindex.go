package lbmap

import "encoding/binary"

// addrIndex holds the writer's backend records by address. IPv4
// backends (nearly all) are keyed by a uint64 (address, port, protocol):
// a map slot of 16 bytes where a 20-byte key and its pointer take 32,
// so building the index of an initial sync's 100,000 backends touches
// half the memory, and a lookup hashes one word. IPv6 backends are
// keyed by addrKey.
type addrIndex struct {
	v4 map[uint64]*backend
	v6 map[addrKey]*backend
}

// packed4 returns IPv4 key k as one word.
func (k *addrKey) packed4() uint64 {
	return uint64(binary.BigEndian.Uint32(k.addr[12:]))<<24 | uint64(k.port)<<8 | uint64(k.proto)
}

// reset empties the index, with room for n IPv4 backends.
func (x *addrIndex) reset(n int) {
	x.v4, x.v6 = make(map[uint64]*backend, n), map[addrKey]*backend{}
}

// get returns the record of address k, nil if there is none.
func (x *addrIndex) get(k *addrKey) *backend {
	if k.is4() {
		return x.v4[k.packed4()]
	}
	return x.v6[*k]
}

// set makes be the record of address k.
func (x *addrIndex) set(k *addrKey, be *backend) {
	if k.is4() {
		x.v4[k.packed4()] = be
	} else {
		x.v6[*k] = be
	}
}

// del removes be, the record of address k; another record there stays.
func (x *addrIndex) del(k *addrKey, be *backend) {
	if k.is4() {
		if p := k.packed4(); x.v4[p] == be {
			delete(x.v4, p)
		}
	} else if x.v6[*k] == be {
		delete(x.v6, *k)
	}
}
