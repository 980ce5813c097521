package testpkt

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Protocol numbers.
const (
	ProtoICMP   = 1
	ProtoTCP    = 6
	ProtoUDP    = 17
	ProtoICMPv6 = 58
	ProtoSCTP   = 132
)

// TCP flags.
const (
	FIN = 0x01
	SYN = 0x02
	RST = 0x04
	ACK = 0x10
)

// Packet describes a frame.
type Packet struct {
	Src, Dst netip.Addr // both IPv4 or both IPv6
	Proto    uint8
	// Sport and Dport are the L4 ports (TCP, UDP, SCTP).
	Sport, Dport uint16
	// TCPFlags for TCP (SYN when zero).
	TCPFlags uint8
	// ICMPType, ICMPCode and ICMPID (echo identifier) for ICMP/ICMPv6.
	ICMPType, ICMPCode uint8
	ICMPID             uint16
	// Payload bytes after the L4 header (zeros).
	Payload int
	// FragOffset, when not zero, makes the packet a non-first fragment
	// (offset in 8-byte units): IPv4 fragment offset, or an IPv6
	// fragment header. The L4 header is still written (as payload).
	FragOffset uint16
	// MoreFragments sets the more-fragments flag (an IPv6 fragment
	// header is added); with FragOffset 0 the packet is a first fragment.
	MoreFragments bool
	// FragID is the IPv4 identification (low 16 bits) or IPv6 fragment id.
	FragID uint32
	// HopByHop adds an (empty) IPv6 hop-by-hop options header.
	HopByHop bool
	// Embedded bytes follow the L4 header before the payload: the start
	// of the offending packet in an ICMP error (see ICMPError), or an
	// SCTP packet's chunks.
	Embedded []byte
}

// ICMPError returns the ICMP (IPv4) or ICMPv6 error message of type typ
// and code that src sends to dst about the packet about: it embeds about's
// IP header and the first 8 bytes of its L4 header.
func ICMPError(src, dst netip.Addr, typ, code uint8, about Packet) (Packet, error) {
	frame, err := about.Frame()
	if err != nil {
		return Packet{}, err
	}
	ip := frame[14:]
	n, proto := 20+8, uint8(ProtoICMP)
	if about.Src.Is6() {
		n, proto = 40+8, ProtoICMPv6
	}
	if len(ip) < n {
		n = len(ip)
	}
	return Packet{Src: src, Dst: dst, Proto: proto, ICMPType: typ, ICMPCode: code, Embedded: ip[:n]}, nil
}

// Frame returns the Ethernet frame of p.
func (p Packet) Frame() ([]byte, error) {
	if !p.Src.IsValid() || !p.Dst.IsValid() || p.Src.Is4() != p.Dst.Is4() {
		return nil, fmt.Errorf("build packet: addresses %v and %v must both be IPv4 or both IPv6", p.Src, p.Dst)
	}
	l4 := p.l4()
	eth := make([]byte, 14)
	copy(eth[0:6], []byte{0x02, 0, 0, 0, 0, 2})
	copy(eth[6:12], []byte{0x02, 0, 0, 0, 0, 1})
	if p.Src.Is4() {
		binary.BigEndian.PutUint16(eth[12:], 0x0800)
		ip := make([]byte, 20)
		ip[0] = 0x45
		binary.BigEndian.PutUint16(ip[2:], uint16(20+len(l4)))
		ip[8] = 64
		ip[9] = p.Proto
		flags := p.FragOffset & 0x1fff
		if p.MoreFragments {
			flags |= 0x2000
		}
		binary.BigEndian.PutUint16(ip[4:], uint16(p.FragID))
		binary.BigEndian.PutUint16(ip[6:], flags)
		s, d := p.Src.As4(), p.Dst.As4()
		copy(ip[12:16], s[:])
		copy(ip[16:20], d[:])
		return append(append(eth, ip...), l4...), nil
	}
	binary.BigEndian.PutUint16(eth[12:], 0x86dd)
	next := p.Proto
	var ext []byte
	if p.FragOffset != 0 || p.MoreFragments { // fragment header: next, reserved, offset<<3 | M, id
		frag := make([]byte, 8)
		frag[0] = next
		m := uint16(0)
		if p.MoreFragments {
			m = 1
		}
		binary.BigEndian.PutUint16(frag[2:], p.FragOffset<<3|m)
		binary.BigEndian.PutUint32(frag[4:], p.FragID)
		ext, next = append(frag, ext...), 44
	}
	if p.HopByHop { // next, length 0 (8 bytes), PadN option of 4 bytes
		ext, next = append([]byte{next, 0, 1, 4, 0, 0, 0, 0}, ext...), 0
	}
	ip := make([]byte, 40)
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], uint16(len(ext)+len(l4)))
	ip[6] = next
	ip[7] = 64
	s, d := p.Src.As16(), p.Dst.As16()
	copy(ip[8:24], s[:])
	copy(ip[24:40], d[:])
	return append(append(append(eth, ip...), ext...), l4...), nil
}

// MustFrame is Frame for fixed test packets; it panics on bad addresses.
func (p Packet) MustFrame() []byte {
	b, err := p.Frame()
	if err != nil {
		panic(err)
	}
	return b
}

func (p Packet) l4() []byte {
	var h []byte
	switch p.Proto {
	case ProtoTCP:
		h = make([]byte, 20)
		binary.BigEndian.PutUint16(h[0:], p.Sport)
		binary.BigEndian.PutUint16(h[2:], p.Dport)
		h[12] = 5 << 4
		h[13] = p.TCPFlags
		if h[13] == 0 {
			h[13] = SYN
		}
		binary.BigEndian.PutUint16(h[14:], 65535)
	case ProtoUDP:
		h = make([]byte, 8)
		binary.BigEndian.PutUint16(h[0:], p.Sport)
		binary.BigEndian.PutUint16(h[2:], p.Dport)
		binary.BigEndian.PutUint16(h[4:], uint16(8+p.Payload))
	case ProtoSCTP:
		h = make([]byte, 12)
		binary.BigEndian.PutUint16(h[0:], p.Sport)
		binary.BigEndian.PutUint16(h[2:], p.Dport)
	case ProtoICMP, ProtoICMPv6:
		h = make([]byte, 8)
		h[0] = p.ICMPType
		h[1] = p.ICMPCode
		binary.BigEndian.PutUint16(h[4:], p.ICMPID)
	}
	h = append(h, p.Embedded...)
	return append(h, make([]byte, p.Payload)...)
}

// Reply returns the packet the peer answers p with: addresses and ports
// swapped; TCP SYN becomes SYN|ACK, other TCP flags ACK; an ICMP echo
// request becomes an echo reply with the same identifier.
func (p Packet) Reply() Packet {
	r := p
	r.Src, r.Dst = p.Dst, p.Src
	r.Sport, r.Dport = p.Dport, p.Sport
	switch {
	case p.Proto == ProtoTCP && (p.TCPFlags == 0 || p.TCPFlags == SYN):
		r.TCPFlags = SYN | ACK
	case p.Proto == ProtoTCP:
		r.TCPFlags = ACK
	case p.Proto == ProtoICMP && p.ICMPType == 8:
		r.ICMPType = 0
	case p.Proto == ProtoICMPv6 && p.ICMPType == 128:
		r.ICMPType = 129
	}
	return r
}
