package policy

import (
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
)

// TestMapKeyRoundTrip packs and unpacks keys with every field at its
// limits: the packed map state must give back the keys it was given.
func TestMapKeyRoundTrip(t *testing.T) {
	for _, give := range []Key{
		{},
		{Direction: Egress},
		{Identity: 1, Direction: Ingress, Proto: ProtoTCP, Port: 80, PrefixLen: 16},
		{Identity: ^identity.NumericIdentity(0), Direction: Egress, Proto: 255, Port: 0xffff, PrefixLen: 16},
		{Identity: 1 << 24, Direction: Egress, Proto: ProtoICMPv6, Port: 128, PrefixLen: 16},
		{Identity: 16777217, Direction: Ingress, Proto: ProtoUDP, Port: 0x8000, PrefixLen: 1},
	} {
		if got := packKey(give).unpack(); got != give {
			t.Errorf("packKey(%v).unpack() = %v", give, got)
		}
		pk := portKey{proto: give.Proto, port: give.Port, prefixLen: give.PrefixLen}
		if got := portMapKey(give.Direction, pk).withIdentity(give.Identity); got != packKey(give) {
			t.Errorf("portMapKey(%v).withIdentity = %#x, want %#x", give, got, packKey(give))
		}
		if got := packKey(give).withIdentity(7).unpack(); got.Identity != 7 || got.Port != give.Port || got.Direction != give.Direction {
			t.Errorf("packKey(%v).withIdentity(7) = %v", give, got)
		}
	}
}
