package policy

import "github.com/apiary-net/apiary/policy/policyapi"

// IsNeighbourDiscovery reports whether proto and port (for ICMPv6 the
// message type) are an ICMPv6 neighbour discovery message (router
// solicitation to redirect, 133-137). The datapath passes those without
// policy so that endpoints can resolve their neighbours; trace and
// simulate answer them the same way.
func IsNeighbourDiscovery(proto policyapi.Protocol, port uint16) bool {
	return proto == policyapi.ProtoICMPv6 && port >= 133 && port <= 137
}
