package policy

import (
	"math/bits"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// portKey is the protocol and port part of a key.
type portKey struct {
	proto     Proto
	port      uint16
	prefixLen uint8
}

// allTraffic is the port key of an L3-only rule.
var allTraffic = portKey{proto: ProtoAny}

var protoNumbers = map[policyapi.Protocol]Proto{
	policyapi.ProtoTCP: ProtoTCP, policyapi.ProtoUDP: ProtoUDP, policyapi.ProtoSCTP: ProtoSCTP,
	policyapi.ProtoICMP: ProtoICMP, policyapi.ProtoICMPv6: ProtoICMPv6,
}

// ProtoOf returns the engine's number of a traffic protocol (TCP, UDP,
// SCTP, ICMP, ICMPv6); ok is false for others (ANY included).
func ProtoOf(p policyapi.Protocol) (proto Proto, ok bool) {
	proto, ok = protoNumbers[p]
	return proto, ok
}

// portKeys returns the port keys of a peer rule on an endpoint declaring
// named: one for an L3-only rule, else each resolved port (ranges split
// into prefixes) on each protocol, and each ICMP type. A named port the
// endpoint does not declare yields nothing.
func portKeys(r policyapi.PeerRule, named []policyapi.NamedPort) []portKey {
	if r.IsL3Only() {
		return []portKey{allTraffic}
	}
	var out []portKey
	for _, pp := range r.Ports {
		for _, resolved := range pp.Resolve(named) {
			first, last := resolved.Range()
			for _, proto := range resolved.Protocol.Protocols() {
				for _, pr := range rangePrefixes(first, last) {
					out = append(out, portKey{proto: protoNumbers[proto], port: pr.port, prefixLen: pr.prefixLen})
				}
			}
		}
	}
	for _, icmp := range r.ICMPs {
		proto := ProtoICMP
		if icmp.Family == policyapi.ICMPv6 {
			proto = ProtoICMPv6
		}
		out = append(out, portKey{proto: proto, port: uint16(icmp.Type), prefixLen: 16})
	}
	return out
}

// portPrefix is a block of ports sharing their top prefixLen bits.
type portPrefix struct {
	port      uint16
	prefixLen uint8
}

// rangePrefixes splits first..last into the fewest aligned prefixes.
func rangePrefixes(first, last uint16) []portPrefix {
	var out []portPrefix
	lo, hi := uint32(first), uint32(last)
	for lo <= hi {
		size := uint32(1) << 16
		if lo != 0 {
			size = 1 << bits.TrailingZeros32(lo)
		}
		for size > hi-lo+1 {
			size >>= 1
		}
		out = append(out, portPrefix{port: uint16(lo), prefixLen: uint8(16 - bits.TrailingZeros32(size))})
		lo += size
	}
	return out
}
