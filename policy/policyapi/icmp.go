package policyapi

import (
	"fmt"
	"strconv"
)

// ICMPFamily is the IP family of an ICMP rule.
type ICMPFamily string

// ICMP families.
const (
	ICMPv4 ICMPFamily = "IPv4"
	ICMPv6 ICMPFamily = "IPv6"
)

// ICMPField is one ICMP (IPv4) or ICMPv6 message type a rule allows or
// denies, all codes of it.
type ICMPField struct {
	Family ICMPFamily `json:"family"`
	Type   uint8      `json:"type"`
}

// String formats f as "IPv4/8".
func (f ICMPField) String() string { return string(f.Family) + "/" + strconv.Itoa(int(f.Type)) }

// ParseICMPType reads an ICMP message type of family: a number in 0..255
// or one of the names icmps rules accept ("EchoRequest").
func ParseICMPType(family ICMPFamily, s string) (uint8, error) {
	if n, err := strconv.ParseUint(s, 10, 8); err == nil {
		return uint8(n), nil
	}
	if t, ok := icmpTypeNames[family][s]; ok {
		return t, nil
	}
	return 0, fmt.Errorf("%q is neither a number in 0..255 nor an %s ICMP type name", s, family)
}

// icmpTypeNames are the message type names Cilium accepts in place of
// numbers, per family.
var icmpTypeNames = map[ICMPFamily]map[string]uint8{
	ICMPv4: {
		"EchoReply": 0, "DestinationUnreachable": 3, "Redirect": 5, "Echo": 8, "EchoRequest": 8,
		"RouterAdvertisement": 9, "RouterSelection": 10, "TimeExceeded": 11, "ParameterProblem": 12,
		"Timestamp": 13, "TimestampReply": 14, "Photuris": 40, "ExtendedEchoRequest": 42,
		"ExtendedEchoReply": 43,
	},
	ICMPv6: {
		"DestinationUnreachable": 1, "PacketTooBig": 2, "TimeExceeded": 3, "ParameterProblem": 4,
		"EchoRequest": 128, "EchoReply": 129, "MulticastListenerQuery": 130,
		"MulticastListenerReport": 131, "MulticastListenerDone": 132, "RouterSolicitation": 133,
		"RouterAdvertisement": 134, "NeighborSolicitation": 135, "NeighborAdvertisement": 136,
		"RedirectMessage": 137, "RouterRenumbering": 138, "ICMPNodeInformationQuery": 139,
		"ICMPNodeInformationResponse": 140, "InverseNeighborDiscoverySolicitation": 141,
		"InverseNeighborDiscoveryAdvertisement": 142, "HomeAgentAddressDiscoveryRequest": 144,
		"HomeAgentAddressDiscoveryReply": 145, "MobilePrefixSolicitation": 146,
		"MobilePrefixAdvertisement": 147, "DuplicateAddressRequestCodeSuffix": 157,
		"DuplicateAddressConfirmationCodeSuffix": 158, "ExtendedEchoRequest": 160,
		"ExtendedEchoReply": 161,
	},
}
