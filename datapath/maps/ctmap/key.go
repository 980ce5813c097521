package ctmap

import (
	"encoding/binary"
	"net/netip"

	"github.com/apiary-net/apiary/policy"
)

// Key4 is struct ct4_key (bpf/lib/maps.h): the addresses and ports of the
// packet that opened the flow (network byte order), the protocol and the
// direction (seen from the endpoint that created the entry).
type Key4 struct {
	Saddr     [4]byte
	Daddr     [4]byte
	Sport     uint16
	Dport     uint16
	Proto     uint8
	Direction uint8
	Pad       uint16
}

// Key6 is struct ct6_key.
type Key6 struct {
	Saddr     [16]byte
	Daddr     [16]byte
	Sport     uint16
	Dport     uint16
	Proto     uint8
	Direction uint8
	Pad       uint16
}

// Value is struct ct_value: expiry (CLOCK_MONOTONIC_COARSE ns), the peer's
// identity, the endpoint id, the TCP flags seen and entry flags, the
// endpoint's policy revision and the ipcache revision the flow was last
// allowed under, and the
// packets and bytes of the flow's opening direction (Tx) and of its
// replies (Rx).
type Value struct {
	Expires      uint64
	PeerIdentity uint32
	EndpointID   uint16
	TCPFlags     uint8
	Flags        uint8
	PolicyRev    uint32
	IPCacheRev   uint32
	TxPackets    uint64
	TxBytes      uint64
	RxPackets    uint64
	RxBytes      uint64
	// BackendID and RevNATIndex: a service entry's backend (direction
	// DirService) and the rev-NAT index of a translated flow's replies.
	BackendID   uint32
	RevNATIndex uint16
	LBPad       uint16
}

// DirService is the direction of a service entry (CT_DIR_SERVICE in
// bpf/lib/lb.h): the untranslated tuple client -> frontend, made by the
// client endpoint's from_container, holding the flow's backend.
const DirService policy.Direction = 2

// DirNodePort is the direction of a flow translated by the NodePort
// programs (CT_DIR_NODEPORT in bpf/netdev.c): client -> backend, holding
// the rev-NAT index of its replies.
const DirNodePort policy.Direction = 3

// FlagClosing is set once FIN or RST was seen.
const FlagClosing = 0x1

// FlagLoopback marks the flow of an endpoint reaching itself through a
// service (hairpin, CT_FLAG_LOOPBACK in bpf/lib/maps.h): tracked as the
// endpoint's ingress flow from the service loopback address.
const FlagLoopback = 0x2

// Tuple is a flow in host types, the same for both families.
type Tuple struct {
	Src, Dst  netip.AddrPort
	Proto     policy.Proto
	Direction policy.Direction
}

// hostPort converts a network-byte-order port field.
func hostPort(p uint16) uint16 {
	var b [2]byte
	binary.NativeEndian.PutUint16(b[:], p)
	return binary.BigEndian.Uint16(b[:])
}

// NetworkPort converts a host port into the network-byte-order field.
func NetworkPort(p uint16) uint16 { return hostPort(p) }

// Tuple returns k in host types.
func (k Key4) Tuple() Tuple {
	return Tuple{
		Src:       netip.AddrPortFrom(netip.AddrFrom4(k.Saddr), hostPort(k.Sport)),
		Dst:       netip.AddrPortFrom(netip.AddrFrom4(k.Daddr), hostPort(k.Dport)),
		Proto:     policy.Proto(k.Proto),
		Direction: policy.Direction(k.Direction),
	}
}

// Tuple returns k in host types.
func (k Key6) Tuple() Tuple {
	return Tuple{
		Src:       netip.AddrPortFrom(netip.AddrFrom16(k.Saddr), hostPort(k.Sport)),
		Dst:       netip.AddrPortFrom(netip.AddrFrom16(k.Daddr), hostPort(k.Dport)),
		Proto:     policy.Proto(k.Proto),
		Direction: policy.Direction(k.Direction),
	}
}

// EndpointAddr returns the address of the endpoint that owns the entry:
// the source of an egress flow or a service entry, the destination of an
// ingress one or a NodePort one (the backend).
func (t Tuple) EndpointAddr() netip.Addr {
	if t.Direction == policy.Egress || t.Direction == DirService {
		return t.Src.Addr()
	}
	return t.Dst.Addr()
}
