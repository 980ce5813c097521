package lbmap

import (
	"encoding/binary"
	"net/netip"

	"github.com/apiary-net/apiary/datapath"
)

// Map names in the programs (and pin names under the bpf root).
const (
	Services4Name      = "lb4_services"
	Services6Name      = "lb6_services"
	Backends4Name      = "lb4_backends"
	Backends6Name      = "lb6_backends"
	RevNAT4Name        = "lb4_reverse_nat"
	RevNAT6Name        = "lb6_reverse_nat"
	AffinityName       = "lb_affinity"
	AffinityMatchName  = "lb_affinity_match"
	ReverseSockName    = "lb_reverse_sk"
	SNATName           = "lb_snat"
	SourceRange4Name   = "lb4_source_range"
	SourceRange6Name   = "lb6_source_range"
	maxRevNATIndex     = 1<<16 - 1
	maxBackendID       = 1<<32 - 1
	maxAffinitySeconds = 1<<32 - 1
)

// MapNames are the maps the loader pins once under the root and gives
// every endpoint's programs.
var MapNames = []string{
	Services4Name, Services6Name, Backends4Name, Backends6Name,
	RevNAT4Name, RevNAT6Name, AffinityName, AffinityMatchName, ReverseSockName, SNATName,
	SourceRange4Name, SourceRange6Name,
}

// Service flags (LB_SVC_FLAG_* in bpf/lib/lbmaps.h).
const (
	FlagAffinity     uint8 = 0x01
	FlagLocal        uint8 = 0x02
	FlagNodePort     uint8 = 0x04
	FlagExternalIP   uint8 = 0x08
	FlagLoadBalancer uint8 = 0x10
	// FlagSourceRange: clients from outside are limited to the
	// frontend's source ranges (loadBalancerSourceRanges).
	FlagSourceRange uint8 = 0x20
	// FlagTwoScopes: the frontend has an internal-scope entry too, which
	// traffic from inside the cluster uses (externalTrafficPolicy Local).
	FlagTwoScopes uint8 = 0x40
	// FlagHostPort: a pod's hostPort (set with FlagNodePort: the NodePort
	// programs balance it).
	FlagHostPort uint8 = 0x80
)

// SrcRange4Key is struct lb4_src_range_key: an LPM key whose prefix
// length counts the rev-NAT index and the pad (32 bits) and the client
// prefix.
type SrcRange4Key struct {
	Prefixlen   uint32
	RevNATIndex uint16
	Pad         uint16
	Address     [4]byte
}

// SrcRange6Key is struct lb6_src_range_key.
type SrcRange6Key struct {
	Prefixlen   uint32
	RevNATIndex uint16
	Pad         uint16
	Address     [16]byte
}

// Service4Key is struct lb4_key: frontend address and port (network byte
// order), backend slot (0: master), protocol.
type Service4Key struct {
	Address     [4]byte
	Dport       uint16
	BackendSlot uint16
	Proto       uint8
	Scope       uint8 // datapath.ScopeExternal or ScopeInternal
	Pad         [2]uint8
}

// Service6Key is struct lb6_key.
type Service6Key struct {
	Address     [16]byte
	Dport       uint16
	BackendSlot uint16
	Proto       uint8
	Scope       uint8 // datapath.ScopeExternal or ScopeInternal
	Pad         [2]uint8
}

// ServiceValue is struct lb_service: a slot's backend id, the master's
// affinity timeout (seconds), count of active backends, rev-NAT index
// (the service id) and flags.
type ServiceValue struct {
	BackendID       uint32
	AffinityTimeout uint32
	Count           uint16
	RevNATIndex     uint16
	Flags           uint8
	Scope           uint8 // the master entry's: its key's scope
	Pad             [2]uint8
}

// Backend4Value is struct lb4_backend.
type Backend4Value struct {
	Address   [4]byte
	Port      uint16
	Proto     uint8
	State     uint8
	ClusterID uint32
}

// Backend6Value is struct lb6_backend.
type Backend6Value struct {
	Address   [16]byte
	Port      uint16
	Proto     uint8
	State     uint8
	ClusterID uint32
}

// RevNAT4Value is struct lb4_rev_nat: the frontend a reply's source
// becomes.
type RevNAT4Value struct {
	Address [4]byte
	Port    uint16
	Pad     uint16
}

// RevNAT6Value is struct lb6_rev_nat.
type RevNAT6Value struct {
	Address [16]byte
	Port    uint16
	Pad     uint16
}

// AffinityKey is struct lb_affinity_key.
type AffinityKey struct {
	Client      [16]byte
	RevNATIndex uint16
	Family      uint8
	Pad         uint8
}

// AffinityValue is struct lb_affinity_value.
type AffinityValue struct {
	LastUsed  uint64
	BackendID uint32
	Pad       uint32
}

// AffinityMatchKey is struct lb_affinity_match_key.
type AffinityMatchKey struct {
	BackendID   uint32
	RevNATIndex uint16
	Pad         uint16
}

// netPort converts between a host port and a network-byte-order field
// (the conversion is its own inverse).
func netPort(p uint16) uint16 {
	var b [2]byte
	binary.BigEndian.PutUint16(b[:], p)
	return binary.NativeEndian.Uint16(b[:])
}

// service4Key returns the key of the slot of IPv4 frontend k.
func service4Key(k *addrKey, slot uint16) Service4Key {
	return Service4Key{Address: [4]byte(k.addr[12:]), Dport: netPort(k.port), BackendSlot: slot, Proto: k.proto, Scope: k.scope()}
}

// service6Key returns the key of the slot of IPv6 frontend k.
func service6Key(k *addrKey, slot uint16) Service6Key {
	return Service6Key{Address: k.addr, Dport: netPort(k.port), BackendSlot: slot, Proto: k.proto, Scope: k.scope()}
}

// backend4Value returns IPv4 backend b's value.
func backend4Value(b backendEntry) Backend4Value {
	return Backend4Value{Address: [4]byte(b.addr.addr[12:]), Port: netPort(b.addr.port), Proto: b.addr.proto, State: uint8(b.state), ClusterID: b.clusterID}
}

// backend6Value returns IPv6 backend b's value.
func backend6Value(b backendEntry) Backend6Value {
	return Backend6Value{Address: b.addr.addr, Port: netPort(b.addr.port), Proto: b.addr.proto, State: uint8(b.state), ClusterID: b.clusterID}
}

// revNATValue returns the rev-NAT value of frontend a.
func revNATValue(a datapath.L3n4Addr) any {
	if a.Addr.Is4() {
		return &RevNAT4Value{Address: a.Addr.As4(), Port: netPort(a.Port)}
	}
	return &RevNAT6Value{Address: a.Addr.As16(), Port: netPort(a.Port)}
}

func (k Service4Key) frontend() datapath.L3n4Addr {
	return datapath.L3n4Addr{Addr: netip.AddrFrom4(k.Address), Port: netPort(k.Dport), Proto: k.Proto, Scope: k.Scope}
}

func (k Service6Key) frontend() datapath.L3n4Addr {
	return datapath.L3n4Addr{Addr: netip.AddrFrom16(k.Address), Port: netPort(k.Dport), Proto: k.Proto, Scope: k.Scope}
}

func (v Backend4Value) entry() backendEntry {
	return backendEntry{addr: keyOf(datapath.L3n4Addr{Addr: netip.AddrFrom4(v.Address), Port: netPort(v.Port), Proto: v.Proto}),
		state: datapath.BackendState(v.State), clusterID: v.ClusterID}
}

func (v Backend6Value) entry() backendEntry {
	return backendEntry{addr: keyOf(datapath.L3n4Addr{Addr: netip.AddrFrom16(v.Address), Port: netPort(v.Port), Proto: v.Proto}),
		state: datapath.BackendState(v.State), clusterID: v.ClusterID}
}
