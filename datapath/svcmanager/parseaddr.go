package svcmanager

import (
	"net/netip"
	"strings"
)

// parseAddr is netip.ParseAddr, a few times faster for the dotted IPv4
// addresses most EndpointSlices hold: anything else, and anything the
// fast path is not sure of, goes to netip.ParseAddr.
func parseAddr(s string) (netip.Addr, error) {
	if a, ok := parseIPv4(s); ok {
		return a, nil
	}
	return netip.ParseAddr(s)
}

// parseIPv4 parses four decimal fields of 0-255 without leading zeros,
// separated by dots; ok is false for anything else. The address is
// built in a register: four byte stores read back as one word stall the
// CPU (the store cannot be forwarded), a third of the parse.
func parseIPv4(s string) (a netip.Addr, ok bool) {
	var ip uint32
	field, digits, val := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			if digits > 0 && val == 0 { // a leading zero
				return a, false
			}
			val = val*10 + int(c-'0')
			if val > 255 {
				return a, false
			}
			digits++
		case c == '.' && digits > 0 && field < 3:
			ip = ip<<8 | uint32(val)
			field, digits, val = field+1, 0, 0
		default:
			return a, false
		}
	}
	if field != 3 || digits == 0 {
		return a, false
	}
	ip = ip<<8 | uint32(val)
	return netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}), true
}

// parseAddrSloppy is parseAddr that also takes IPv4 fields with leading
// zeros, read as decimal, as Kubernetes' ParseIPSloppy does for the
// values its API accepted before Go 1.17 refused them ("010.0.0.1" is
// 10.0.0.1).
func parseAddrSloppy(s string) (netip.Addr, error) {
	a, err := parseAddr(s)
	if err == nil || strings.Contains(s, ":") {
		return a, err
	}
	fields := strings.Split(s, ".")
	if len(fields) != 4 {
		return a, err
	}
	var b [4]byte
	for i, f := range fields {
		v, ok := decimal(f, 255)
		if !ok {
			return a, err
		}
		b[i] = byte(v)
	}
	return netip.AddrFrom4(b), nil
}

// decimal parses s, decimal digits only (leading zeros allowed), of a
// value of at most limit; false: not such a number.
func decimal(s string, limit int) (int, bool) {
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
		if v > limit {
			return 0, false
		}
	}
	return v, true
}
