package policymap

import (
	"encoding/binary"
	"fmt"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// Key bits: identity (32) and direction (8) are always matched; then the
// protocol (8) unless the key is for any protocol; then the port prefix.
const (
	staticPrefix = 40
	protoBits    = 8
	fullPrefix   = 64
)

// Key is struct policy_key (bpf/lib/maps.h). Port is in network byte
// order, as the programs compare it; use PortHost to read it.
type Key struct {
	Prefixlen uint32
	Identity  uint32
	Direction uint8
	Proto     uint8
	Port      uint16
}

// Value is struct policy_value: flags (bit 0 deny), the key's prefix
// length past the fixed 40 bits, padding, and the counters the programs
// maintain.
type Value struct {
	Flags       uint8
	L4Prefixlen uint8
	Pad1        uint16
	Pad2        uint32
	Packets     uint64
	Bytes       uint64
}

// FlagDeny marks a deny entry.
const FlagDeny = 0x1

// Entry is what the agent writes for a key: the verdict, with the key's
// L4 prefix length. Counters are not part of it.
type Entry struct {
	Deny        bool
	L4Prefixlen uint8
}

func (e Entry) value() Value {
	v := Value{L4Prefixlen: e.L4Prefixlen}
	if e.Deny {
		v.Flags = FlagDeny
	}
	return v
}

func entryOf(v Value) Entry {
	return Entry{Deny: v.Flags&FlagDeny != 0, L4Prefixlen: v.L4Prefixlen}
}

// networkPort returns port as the Port field holds it.
func networkPort(port uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], port)
	return binary.NativeEndian.Uint16(b[:])
}

// PortHost returns the key's port in host byte order.
func (k Key) PortHost() uint16 { return networkPort(k.Port) }

// NewKey returns the map key of a map-state key. A key for any protocol
// must not restrict the port (the map cannot express it).
func NewKey(k policy.Key) (Key, error) {
	switch {
	case k.Direction != policy.Ingress && k.Direction != policy.Egress:
		return Key{}, fmt.Errorf("policy key %v: direction %d is neither ingress nor egress", k, k.Direction)
	case k.PrefixLen > 16:
		return Key{}, fmt.Errorf("policy key %v: port prefix length %d is over 16", k, k.PrefixLen)
	case k.Proto == policy.ProtoAny && k.PrefixLen != 0:
		return Key{}, fmt.Errorf("policy key %v: a port needs a protocol", k)
	}
	out := Key{Prefixlen: staticPrefix, Identity: uint32(k.Identity), Direction: uint8(k.Direction)}
	if k.Proto != policy.ProtoAny {
		out.Proto = uint8(k.Proto)
		out.Prefixlen += protoBits + uint32(k.PrefixLen)
		mask := uint16(0)
		if k.PrefixLen > 0 {
			mask = ^uint16(0) << (16 - k.PrefixLen)
		}
		out.Port = networkPort(k.Port & mask)
	}
	return out, nil
}

// PolicyKey returns the map-state key k stands for.
func (k Key) PolicyKey() policy.Key {
	pk := policy.Key{
		Identity:  identity.NumericIdentity(k.Identity),
		Direction: policy.Direction(k.Direction),
		Proto:     policy.Proto(k.Proto),
		Port:      k.PortHost(),
	}
	if k.Prefixlen > staticPrefix+protoBits {
		pk.PrefixLen = uint8(k.Prefixlen - staticPrefix - protoBits)
	}
	return pk
}

// l4Prefixlen is the key's prefix length past identity and direction.
func (k Key) l4Prefixlen() uint8 { return uint8(k.Prefixlen - staticPrefix) }
