package svcmanager

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// TestParseAddr: the fast path agrees with netip.ParseAddr on every
// string it accepts, accepts every IPv4 address netip prints, and
// leaves the rest (odd forms, IPv6, zones, garbage) to netip.
func TestParseAddr(t *testing.T) {
	check := func(s string) {
		t.Helper()
		got, gerr := parseAddr(s)
		want, werr := netip.ParseAddr(s)
		if got != want || (gerr == nil) != (werr == nil) {
			t.Fatalf("parseAddr(%q) = %v, %v; netip: %v, %v", s, got, gerr, want, werr)
		}
	}
	for _, s := range []string{"0.0.0.0", "255.255.255.255", "10.0.1.1", "1.2.3.4", "01.2.3.4", "1.2.3.04", "1.2.3.00",
		"256.1.1.1", "1.2.3", "1.2.3.4.5", "1..2.3", ".1.2.3", "1.2.3.", "1.2.3.4 ", " 1.2.3.4", "1.2.3.-4", "",
		"::ffff:1.2.3.4", "fd00::1", "fe80::1%eth0", "1.2.3.4%eth0", "1.2.3.999", "1000.2.3.4", "0.0.0.0000", "a.b.c.d"} {
		check(s)
	}
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := "0123456789.:af%"
	for range 200000 {
		if r.IntN(2) == 0 {
			a := netip.AddrFrom4([4]byte{byte(r.UintN(256)), byte(r.UintN(256)), byte(r.UintN(256)), byte(r.UintN(256))})
			if _, ok := parseIPv4(a.String()); !ok {
				t.Fatalf("fast path refused %s", a)
			}
			check(a.String())
			continue
		}
		b := make([]byte, 1+r.IntN(16))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		check(string(b))
	}
}
