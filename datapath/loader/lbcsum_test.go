package loader_test

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"net/netip"
)

// Checksums of test frames: testpkt leaves them zero, but the service
// translation updates them incrementally, which is only checkable from a
// correct start.

func sum16(b []byte, acc uint32) uint32 {
	for i := 0; i+1 < len(b); i += 2 {
		acc += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		acc += uint32(b[len(b)-1]) << 8
	}
	return acc
}

func fold(acc uint32) uint16 {
	for acc>>16 != 0 {
		acc = acc&0xffff + acc>>16
	}
	return ^uint16(acc)
}

// frameParts returns the frame's L4 header offset and protocol, and the
// pseudo-header sum.
func frameParts(f []byte) (l4off int, proto uint8, pseudo uint32) {
	if binary.BigEndian.Uint16(f[12:]) == 0x0800 {
		ihl := int(f[14]&0xf) * 4
		l4off, proto = 14+ihl, f[23]
		pseudo = sum16(f[26:34], 0) + uint32(proto) + uint32(len(f)-l4off)
		return
	}
	l4off, proto = 54, f[20]
	pseudo = sum16(f[22:54], 0) + uint32(proto) + uint32(len(f)-l4off)
	return
}

func l4CsumOff(proto uint8) int {
	if proto == 6 {
		return 16
	}
	return 6
}

// castagnoli is SCTP's CRC32c.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// sctpCRC returns the CRC32c of SCTP packet p, its checksum field (bytes
// 8-11, little-endian) taken as zero.
func sctpCRC(p []byte) uint32 {
	c := append([]byte(nil), p...)
	clear(c[8:12])
	return crc32.Checksum(c, castagnoli)
}

// withChecksums returns f with correct IPv4 header and TCP/UDP checksums
// or SCTP CRC32c.
func withChecksums(f []byte) []byte {
	f = append([]byte(nil), f...)
	if binary.BigEndian.Uint16(f[12:]) == 0x0800 {
		binary.BigEndian.PutUint16(f[24:], 0)
		binary.BigEndian.PutUint16(f[24:], fold(sum16(f[14:34], 0)))
	}
	l4off, proto, pseudo := frameParts(f)
	if proto == 132 {
		binary.LittleEndian.PutUint32(f[l4off+8:], sctpCRC(f[l4off:]))
		return f
	}
	off := l4off + l4CsumOff(proto)
	binary.BigEndian.PutUint16(f[off:], 0)
	c := fold(sum16(f[l4off:], pseudo))
	if c == 0 && proto == 17 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(f[off:], c)
	return f
}

// checkChecksums reports a wrong IPv4 header or TCP/UDP checksum, or
// SCTP CRC32c, in f.
func checkChecksums(f []byte) error {
	if binary.BigEndian.Uint16(f[12:]) == 0x0800 {
		if c := fold(sum16(f[14:34], 0)); c != 0 {
			return fmt.Errorf("IPv4 header checksum off by %#04x", c)
		}
	}
	l4off, proto, pseudo := frameParts(f)
	if proto == 132 {
		if got, want := binary.LittleEndian.Uint32(f[l4off+8:]), sctpCRC(f[l4off:]); got != want {
			return fmt.Errorf("SCTP checksum %#08x, want %#08x", got, want)
		}
		return nil
	}
	if c := fold(sum16(f[l4off:], pseudo)); c != 0 {
		return fmt.Errorf("L4 checksum off by %#04x", c)
	}
	return nil
}

// frameTuple returns the frame's addresses and ports.
func frameTuple(f []byte) (src, dst netip.AddrPort) {
	l4off, _, _ := frameParts(f)
	sp, dp := binary.BigEndian.Uint16(f[l4off:]), binary.BigEndian.Uint16(f[l4off+2:])
	if binary.BigEndian.Uint16(f[12:]) == 0x0800 {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(f[26:30])), sp), netip.AddrPortFrom(netip.AddrFrom4([4]byte(f[30:34])), dp)
	}
	return netip.AddrPortFrom(netip.AddrFrom16([16]byte(f[22:38])), sp), netip.AddrPortFrom(netip.AddrFrom16([16]byte(f[38:54])), dp)
}

// icmpOffsets returns the offsets of an ICMP error frame's ICMP header
// and embedded IP header.
func icmpOffsets(f []byte) (icmp, inner int, v4 bool) {
	if binary.BigEndian.Uint16(f[12:]) == 0x0800 {
		return 14 + int(f[14]&0xf)*4, 14 + int(f[14]&0xf)*4 + 8, true
	}
	return 54, 62, false
}

// icmpSum is the ICMP (no pseudo header) or ICMPv6 (pseudo header) sum.
func icmpSum(f []byte) uint16 {
	icmp, _, v4 := icmpOffsets(f)
	if v4 {
		return fold(sum16(f[icmp:], 0))
	}
	return fold(sum16(f[icmp:], sum16(f[22:54], 0)+58+uint32(len(f)-icmp)))
}

// withICMPChecksums returns the ICMP error frame f with correct outer
// IPv4, embedded IPv4 and ICMP checksums.
func withICMPChecksums(f []byte) []byte {
	f = append([]byte(nil), f...)
	icmp, inner, v4 := icmpOffsets(f)
	if v4 {
		binary.BigEndian.PutUint16(f[24:], 0)
		binary.BigEndian.PutUint16(f[24:], fold(sum16(f[14:34], 0)))
		binary.BigEndian.PutUint16(f[inner+10:], 0)
		binary.BigEndian.PutUint16(f[inner+10:], fold(sum16(f[inner:inner+20], 0)))
	}
	binary.BigEndian.PutUint16(f[icmp+2:], 0)
	binary.BigEndian.PutUint16(f[icmp+2:], icmpSum(f))
	return f
}

// checkICMPChecksums reports a wrong checksum in the ICMP error frame f.
func checkICMPChecksums(f []byte) error {
	_, inner, v4 := icmpOffsets(f)
	if v4 {
		if c := fold(sum16(f[14:34], 0)); c != 0 {
			return fmt.Errorf("IPv4 header checksum off by %#04x", c)
		}
		if c := fold(sum16(f[inner:inner+20], 0)); c != 0 {
			return fmt.Errorf("embedded IPv4 header checksum off by %#04x", c)
		}
	}
	if c := icmpSum(f); c != 0 {
		return fmt.Errorf("ICMP checksum off by %#04x", c)
	}
	return nil
}

// icmpTuple returns an ICMP error frame's outer source and the embedded
// packet's destination.
func icmpTuple(f []byte) (src netip.Addr, innerDst netip.AddrPort) {
	_, inner, v4 := icmpOffsets(f)
	if v4 {
		return netip.AddrFrom4([4]byte(f[26:30])), netip.AddrPortFrom(netip.AddrFrom4([4]byte(f[inner+16:inner+20])), binary.BigEndian.Uint16(f[inner+22:]))
	}
	return netip.AddrFrom16([16]byte(f[22:38])), netip.AddrPortFrom(netip.AddrFrom16([16]byte(f[inner+24:inner+40])), binary.BigEndian.Uint16(f[inner+42:]))
}
