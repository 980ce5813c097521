package datapath

import "github.com/apiary-net/apiary/policy"

// PolicyEnforced reports whether an endpoint's programs must look its
// policy map up for new flows in direction dir (the loader's
// EnforceIngress/EnforceEgress). It is true when a rule puts the endpoint
// in default deny there (defaultDeny, policy.SelectorPolicy.DefaultDeny),
// and also when the map state has a deny key in that direction: an
// endpoint no rule isolates still has its deny rules applied (its map
// state is the allow-all key plus the denies), and with enforcement off
// the programs would let them pass.
func PolicyEnforced(ms policy.MapState, dir policy.Direction, defaultDeny bool) bool {
	if defaultDeny {
		return true
	}
	for k, e := range ms {
		if k.Direction == dir && e.Deny {
			return true
		}
	}
	return false
}
