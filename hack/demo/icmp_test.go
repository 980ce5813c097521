package main

import (
	"net/netip"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// TestICMPMessage: an IPv4 message sums to zero with its checksum (an
// ICMPv6 one is left to the kernel), and every message carries its
// type, identifier, sequence number and the marked token.
func TestICMPMessage(t *testing.T) {
	tests := []struct {
		f   fam
		typ byte
	}{{v4, icmpEchoRequest}, {v4, 13}, {v6, icmpv6EchoRequest}, {v6, 135}}
	for _, tt := range tests {
		msg := icmpMessage(tt.f, tt.typ, 0x1234, 0xbeef, "0a0b0c")
		if msg[0] != tt.typ || msg[1] != 0 || msg[4] != 0x12 || msg[5] != 0x34 || msg[6] != 0xbe || msg[7] != 0xef {
			t.Errorf("%s type %d: header % x", tt.f, tt.typ, msg[:8])
		}
		if got := string(msg[8:]); got != icmpMarker+"0a0b0c" {
			t.Errorf("%s type %d: payload %q", tt.f, tt.typ, got)
		}
		sum := checksum(msg)
		if tt.f == v4 && sum != 0 {
			t.Errorf("IPv4 type %d: the message sums to %#x with its checksum, want 0", tt.typ, sum)
		}
		if tt.f == v6 && (msg[2] != 0 || msg[3] != 0) {
			t.Errorf("IPv6 type %d: checksum % x set, the kernel sums ICMPv6", tt.typ, msg[2:4])
		}
	}
}

// TestQueryFam: a query's packets take ICMP's or ICMPv6's family, else
// that of the address sent to, else of the address sent from, else
// IPv4.
func TestQueryFam(t *testing.T) {
	a4, a6 := netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("fd00::2")
	tests := []struct {
		proto    string
		from, to netip.Addr
		want     fam
	}{
		{"TCP", netip.Addr{}, netip.Addr{}, v4},
		{"TCP", a6, netip.Addr{}, v6},
		{"UDP", a6, a4, v4},
		{"TCP", a4, a6, v6},
		{"ICMPv6", netip.Addr{}, netip.Addr{}, v6},
		{"ICMP", a6, netip.Addr{}, v4},
	}
	for _, tt := range tests {
		qm := simulate.QueryModel{Protocol: policyapi.Protocol(tt.proto), From: simulate.SideModel{IP: tt.from}, To: simulate.SideModel{IP: tt.to}}
		if got := queryFam(qm); got != tt.want {
			t.Errorf("%s %v -> %v: %s, want %s", tt.proto, tt.from, tt.to, got, tt.want)
		}
	}
}

// TestHostAddr: the last byte is the host number, in decimal for IPv6
// too (::21 is node 1 of cluster 2).
func TestHostAddr(t *testing.T) {
	tests := []struct {
		underlay string
		last     int
		want     string
	}{
		{"192.168.254.0/24", 241, "192.168.254.241"},
		{"fd5e:1ab:254::/64", 21, "fd5e:1ab:254::21"},
		{"fd5e:1ab:254::/64", 200, "fd5e:1ab:254::200"},
		{"fd5e:1ab:254::/64", 1, "fd5e:1ab:254::1"},
	}
	for _, tt := range tests {
		if got := hostAddr(netip.MustParsePrefix(tt.underlay), tt.last).String(); got != tt.want {
			t.Errorf("hostAddr(%s, %d) = %s, want %s", tt.underlay, tt.last, got, tt.want)
		}
	}
	for cidr, want := range map[string]string{"fd00::/120": "fd00::ff", "10.0.0.0/29": "10.0.0.7"} {
		if got := lastAddr(netip.MustParsePrefix(cidr)).String(); got != want {
			t.Errorf("lastAddr(%s) = %s, want %s", cidr, got, want)
		}
	}
}
