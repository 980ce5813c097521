package main

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
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

// icmpMarker starts the payload of every ICMP message the lab sends,
// followed by the message's token: the receiving server records the
// token, which is how a query whose type has no answer sees its message
// arrive.
const icmpMarker = "apiary-lab "

// icmpNetwork returns the raw socket network and wildcard address of the
// family.
func icmpNetwork(f fam) (network, any string) {
	if f == v6 {
		return "ip6:ipv6-icmp", "::"
	}
	return "ip4:icmp", "0.0.0.0"
}

// icmpMessage builds an ICMP (IPv4, with its checksum) or ICMPv6 (the
// kernel sums it) message of type typ, code 0, with id and seq in the
// second word (an echo's identifier and sequence number, unused by the
// other types) and the marker and token as payload.
func icmpMessage(f fam, typ byte, id, seq uint16, token string) []byte {
	msg := make([]byte, 8, 8+len(icmpMarker)+len(token))
	msg[0] = typ
	binary.BigEndian.PutUint16(msg[4:], id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	msg = append(append(msg, icmpMarker...), token...)
	if f == v4 {
		binary.BigEndian.PutUint16(msg[2:], checksum(msg))
	}
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

// echoRequest is the echo request type of the family.
func echoRequest(f fam) uint16 {
	if f == v6 {
		return icmpv6EchoRequest
	}
	return icmpEchoRequest
}

// isEchoRequest reports whether typ is the echo request of the family,
// which the destination's kernel answers.
func isEchoRequest(f fam, typ uint16) bool {
	return f == v4 && typ == icmpEchoRequest || f == v6 && typ == icmpv6EchoRequest
}

// sendICMP runs an ICMP or ICMPv6 query from the namespace at path (from
// src when valid): it sends one message of type typ to dst. An echo
// request waits for the echo reply ("reply"); any other type waits until
// the destination's server records the message's token in seenDir
// ("received"). Neither within timeout is "timeout".
func sendICMP(path string, f fam, src, dst netip.Addr, typ uint16, seenDir string, timeout time.Duration) (seen, error) {
	network, bind := icmpNetwork(f)
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
		return seen{}, fmt.Errorf("open %s socket in %s: %w", network, path, err)
	}
	defer c.Close()
	var raw [10]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return seen{}, fmt.Errorf("make an ICMP token: %w", err)
	}
	id, seq, token := binary.BigEndian.Uint16(raw[0:]), binary.BigEndian.Uint16(raw[2:]), hex.EncodeToString(raw[4:])
	if _, err := c.WriteTo(icmpMessage(f, byte(typ), id, seq, token), &net.IPAddr{IP: dst.AsSlice()}); err != nil {
		return seen{}, fmt.Errorf("send %s type %d to %s: %w", f, typ, dst, err)
	}
	deadline := time.Now().Add(timeout)
	if isEchoRequest(f, typ) {
		return waitEchoReply(c, f, dst, id, seq, deadline)
	}
	file := filepath.Join(seenDir, token)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(file); err == nil {
			return seen{answered: true, what: "received"}, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return seen{what: "timeout"}, nil
}

// waitEchoReply reads c until the echo reply from dst with id and seq
// comes or deadline passes.
func waitEchoReply(c net.PacketConn, f fam, dst netip.Addr, id, seq uint16, deadline time.Time) (seen, error) {
	reply := byte(icmpEchoReply)
	if f == v6 {
		reply = icmpv6EchoReply
	}
	_ = c.SetReadDeadline(deadline)
	buf := make([]byte, 1500)
	for {
		n, from, err := c.ReadFrom(buf)
		if isTimeout(err) {
			return seen{what: "timeout"}, nil
		}
		if err != nil {
			return seen{}, fmt.Errorf("read the echo reply from %s: %w", dst, err)
		}
		fromIP, _ := netip.AddrFromSlice(from.(*net.IPAddr).IP)
		if n >= 8 && fromIP.Unmap() == dst && buf[0] == reply &&
			binary.BigEndian.Uint16(buf[4:]) == id && binary.BigEndian.Uint16(buf[6:]) == seq {
			return seen{answered: true, what: "reply"}, nil
		}
	}
}

// recordICMP reads the lab's ICMP messages arriving on c (a raw socket
// of the server's namespace) and creates a file named by each one's
// token in dir, until c is closed.
func recordICMP(c net.PacketConn, dir string) {
	buf := make([]byte, 1500)
	for {
		n, _, err := c.ReadFrom(buf)
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil || n < 8 {
			continue
		}
		payload := string(buf[8:n])
		token, ok := strings.CutPrefix(payload, icmpMarker)
		if !ok || token == "" || strings.ContainsAny(token, "/.") {
			continue
		}
		if err := os.WriteFile(filepath.Join(dir, token), nil, 0o600); err != nil {
			fmt.Fprintf(os.Stderr, "demo serve: record ICMP token: %v\n", err)
		}
	}
}
