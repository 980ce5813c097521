package policymap

import (
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
)

// Translate returns the map entries of an endpoint's map state.
//
// The programs do two longest-prefix lookups per new flow, for the peer's
// identity and for any peer, and drop when either result denies. The
// control plane's verdict is "denied if any covering key denies", and a
// longest match can be an allow key narrower than a deny key covering it;
// so Translate writes every allow key covered by a deny key (same
// direction, identity any or equal, protocol any or equal, port prefix
// covering) as a deny key. With that, the longest match of each lookup
// denies whenever any covering key does, and the two verdicts agree.
func Translate(ms policy.MapState) (map[Key]Entry, error) {
	type scope struct {
		dir policy.Direction
		id  identity.NumericIdentity
	}
	denies := make(map[scope][]policy.Key)
	for k, e := range ms {
		if e.Deny {
			s := scope{k.Direction, k.Identity}
			denies[s] = append(denies[s], k)
		}
	}
	out := make(map[Key]Entry, len(ms))
	for k, e := range ms {
		mk, err := NewKey(k)
		if err != nil {
			return nil, err
		}
		deny := e.Deny
		if !deny {
			deny = coveredBy(k, denies[scope{k.Direction, k.Identity}]) ||
				(k.Identity != 0 && coveredBy(k, denies[scope{k.Direction, 0}]))
		}
		out[mk] = Entry{Deny: deny, L4Prefixlen: mk.l4Prefixlen()}
	}
	return out, nil
}

// coveredBy reports whether one of denies (same direction, identity any or
// k's) covers every packet k covers.
func coveredBy(k policy.Key, denies []policy.Key) bool {
	for _, d := range denies {
		if d.Proto == policy.ProtoAny {
			return true
		}
		if d.Proto != k.Proto || d.PrefixLen > k.PrefixLen {
			continue
		}
		mask := uint16(0)
		if d.PrefixLen > 0 {
			mask = ^uint16(0) << (16 - d.PrefixLen)
		}
		if k.Port&mask == d.Port&mask {
			return true
		}
	}
	return false
}
