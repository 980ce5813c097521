package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/apiary-net/apiary/policy"
)

// protoNames name the protocols of map-state keys.
var protoNames = map[policy.Proto]string{
	policy.ProtoAny: "any", policy.ProtoICMP: "icmp", policy.ProtoTCP: "tcp",
	policy.ProtoUDP: "udp", policy.ProtoICMPv6: "icmpv6", policy.ProtoSCTP: "sctp",
}

// formatKey prints a map-state key and its entry:
// "ingress identity 12346 tcp/80 allow", "egress identity any any allow".
func formatKey(k policy.Key, e policy.Entry) string {
	peer := "any"
	if k.Identity != 0 {
		peer = k.Identity.String()
	}
	verdict := "allow"
	if e.Deny {
		verdict = "deny"
	}
	return fmt.Sprintf("%s identity %s %s %s", k.Direction, peer, formatPorts(k), verdict)
}

// formatPorts prints the protocol and the port prefix of a key as a
// range: "tcp/80", "tcp/8080-8083", "udp" (every port), "any".
func formatPorts(k policy.Key) string {
	name, ok := protoNames[k.Proto]
	if !ok {
		name = strconv.Itoa(int(k.Proto))
	}
	if k.PrefixLen == 0 {
		return name
	}
	first := k.Port &^ (1<<(16-k.PrefixLen) - 1)
	last := first | (1<<(16-k.PrefixLen) - 1)
	if first == last {
		return fmt.Sprintf("%s/%d", name, first)
	}
	return fmt.Sprintf("%s/%d-%d", name, first, last)
}

// sortedKeys returns the keys of m in a stable order: direction, peer,
// protocol, port.
func sortedKeys(m policy.MapState) []policy.Key {
	keys := make([]policy.Key, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b policy.Key) int {
		return cmp.Or(cmp.Compare(a.Direction, b.Direction), cmp.Compare(a.Identity, b.Identity),
			cmp.Compare(a.Proto, b.Proto), cmp.Compare(a.Port, b.Port), cmp.Compare(a.PrefixLen, b.PrefixLen))
	})
	return keys
}
