package policy

import "github.com/apiary-net/apiary/policy/identity"

// mapKey is a Key packed into 64 bits, the key of an endpoint policy's
// own maps: a map keyed by a uint64 hashes and compares faster than one
// keyed by the 12-byte Key struct, and its slots are smaller. From the
// top: the identity (32 bits), the port (16), the protocol (8), the
// direction (3) and the prefix length (5). The engine only makes keys
// whose direction is Ingress or Egress and whose prefix length is at
// most 16, which the fields hold without loss.
type mapKey uint64

const (
	mapKeyIdentityShift = 32
	mapKeyPortShift     = 16
	mapKeyProtoShift    = 8
	mapKeyDirShift      = 5
	mapKeyPrefixMask    = 1<<mapKeyDirShift - 1
)

// packKey packs k; see mapKey for the fields' limits.
func packKey(k Key) mapKey {
	return portMapKey(k.Direction, portKey{proto: k.Proto, port: k.Port, prefixLen: k.PrefixLen}).withIdentity(k.Identity)
}

// portMapKey packs the key of direction dir and port key pk for any
// peer (identity 0); withIdentity sets the peer.
func portMapKey(dir Direction, pk portKey) mapKey {
	return mapKey(pk.port)<<mapKeyPortShift | mapKey(pk.proto)<<mapKeyProtoShift |
		mapKey(dir)<<mapKeyDirShift | mapKey(pk.prefixLen)
}

// withIdentity returns k with its peer identity set to id.
func (k mapKey) withIdentity(id identity.NumericIdentity) mapKey {
	return k&(1<<mapKeyIdentityShift-1) | mapKey(id)<<mapKeyIdentityShift
}

// unpack returns the Key k packs.
func (k mapKey) unpack() Key {
	return Key{
		Identity:  identity.NumericIdentity(k >> mapKeyIdentityShift),
		Port:      uint16(k >> mapKeyPortShift),
		Proto:     Proto(k >> mapKeyProtoShift),
		Direction: Direction(k>>mapKeyDirShift) & 7,
		PrefixLen: uint8(k & mapKeyPrefixMask),
	}
}
