package policy

import "github.com/apiary-net/apiary/policy/identity"

// Verdict reports whether m allows traffic with peer in direction dir on
// proto and port (the ICMP type for ICMP): denied if any key covering
// the traffic denies it, allowed if any covering key allows it, denied
// otherwise. The key's identity may be peer or 0, its protocol proto or
// ProtoAny, and its port prefix must cover port.
func Verdict(m MapState, peer identity.NumericIdentity, dir Direction, proto Proto, port uint16) (allowed bool) {
	allowed = false
	for _, id := range []identity.NumericIdentity{peer, 0} {
		for _, p := range []Proto{proto, ProtoAny} {
			for plen := 0; plen <= 16; plen++ {
				k := Key{Identity: id, Direction: dir, Proto: p, PrefixLen: uint8(plen)}
				k.Port = port & portMask(k.PrefixLen)
				e, ok := m[k]
				switch {
				case !ok:
				case e.Deny:
					return false
				default:
					allowed = true
				}
			}
			if proto == ProtoAny {
				break
			}
		}
		if peer == 0 {
			break
		}
	}
	return allowed
}
