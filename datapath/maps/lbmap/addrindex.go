package lbmap

import "encoding/binary"

// addrIndex holds values by address (the writer's frontends and its
// backend records). IPv4 addresses (nearly all) are keyed by a uint64
// (address, port, protocol, a frontend's scope): a map slot of 16 bytes where a 20-byte key
// and a pointer take 32, so building the index of an initial sync's
// 100,000 backends touches half the memory, and a lookup hashes and
// compares one word (a 20-byte key costs a call to compare it). IPv6
// addresses are keyed by addrKey.
type addrIndex[V comparable] struct {
	v4 map[uint64]V
	v6 map[addrKey]V
}

// packed4 returns IPv4 key k as one word.
func (k *addrKey) packed4() uint64 {
	return uint64(k.v4&keyInternal)<<56 | uint64(binary.BigEndian.Uint32(k.addr[12:]))<<24 | uint64(k.port)<<8 | uint64(k.proto)
}

// reset empties the index, with room for n IPv4 addresses.
func (x *addrIndex[V]) reset(n int) {
	x.v4, x.v6 = make(map[uint64]V, n), map[addrKey]V{}
}

// get returns the value of address k, the zero value if there is none.
func (x *addrIndex[V]) get(k *addrKey) V {
	if k.is4() {
		return x.v4[k.packed4()]
	}
	return x.v6[*k]
}

// set makes v the value of address k.
func (x *addrIndex[V]) set(k *addrKey, v V) {
	if k.is4() {
		x.v4[k.packed4()] = v
	} else {
		x.v6[*k] = v
	}
}

// del removes the value of k when it is v (another value stays).
func (x *addrIndex[V]) del(k *addrKey, v V) {
	if k.is4() {
		if p := k.packed4(); x.v4[p] == v {
			delete(x.v4, p)
		}
	} else if x.v6[*k] == v {
		delete(x.v6, *k)
	}
}

// len returns the number of addresses.
func (x *addrIndex[V]) len() int { return len(x.v4) + len(x.v6) }

// all yields every value, in no particular order; yield may delete the
// value it is given.
func (x *addrIndex[V]) all(yield func(V) bool) {
	for _, v := range x.v4 {
		if !yield(v) {
			return
		}
	}
	for _, v := range x.v6 {
		if !yield(v) {
			return
		}
	}
}
