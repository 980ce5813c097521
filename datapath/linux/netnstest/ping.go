package netnstest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"github.com/apiary-net/apiary/datapath/linux/netnsutil"
)

// ICMP echo message types.
const (
	icmpEchoRequest   = 8
	icmpEchoReply     = 0
	icmpv6EchoRequest = 128
	icmpv6EchoReply   = 129
)

// Ping sends one ICMP (IPv4) or ICMPv6 echo request from the namespace
// at path to dst, from src when it is valid (else the address the route
// gives), through a raw socket, and waits up to timeout for the matching
// echo reply (same identifier and sequence, from dst).
func Ping(path string, src, dst netip.Addr, timeout time.Duration) error {
	network, bind, request, reply := "ip4:icmp", "0.0.0.0", byte(icmpEchoRequest), byte(icmpEchoReply)
	if dst.Is6() {
		network, bind, request, reply = "ip6:ipv6-icmp", "::", icmpv6EchoRequest, icmpv6EchoReply
	}
	if src.IsValid() {
		bind = src.String()
	}
	var c net.PacketConn
	err := netnsutil.RunPath(path, func() error {
		var err error
		c, err = net.ListenPacket(network, bind)
		return err
	})
	if err != nil {
		return fmt.Errorf("open %s socket in %s: %w", network, path, err)
	}
	defer c.Close()
	id, seq := uint16(rand.N(1<<16)), uint16(rand.N(1<<16))
	msg := echo(request, id, seq, []byte("apiary ping"))
	if dst.Is4() {
		binary.BigEndian.PutUint16(msg[2:], checksum(msg)) // the kernel sums ICMPv6 itself
	}
	if _, err := c.WriteTo(msg, &net.IPAddr{IP: dst.AsSlice()}); err != nil {
		return fmt.Errorf("send echo request to %s: %w", dst, err)
	}
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFrom(buf)
		if err != nil {
			return fmt.Errorf("echo reply from %s: %w", dst, err)
		}
		fromIP, _ := netip.AddrFromSlice(from.(*net.IPAddr).IP)
		if n >= 8 && fromIP.Unmap() == dst && buf[0] == reply &&
			binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == seq {
			return nil
		}
	}
}

// echo builds an echo message with a zero checksum.
func echo(typ byte, id, seq uint16, payload []byte) []byte {
	msg := make([]byte, 8+len(payload))
	msg[0] = typ
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	copy(msg[8:], payload)
	return msg
}

// checksum is the Internet checksum (RFC 1071) of b.
func checksum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	if len(b)%2 == 1 {
		sum += uint32(b[len(b)-1]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	return ^uint16(sum)
}
