package monitor

import (
	"strconv"

	"github.com/apiary-net/apiary/policy"
)

// ProtoName names an IP protocol as the API and the CLI show it: TCP,
// UDP, SCTP, ICMP, ICMPv6, ANY for 0, else the number.
func ProtoName(p policy.Proto) string {
	switch p {
	case policy.ProtoAny:
		return "ANY"
	case policy.ProtoTCP:
		return "TCP"
	case policy.ProtoUDP:
		return "UDP"
	case policy.ProtoSCTP:
		return "SCTP"
	case policy.ProtoICMP:
		return "ICMP"
	case policy.ProtoICMPv6:
		return "ICMPv6"
	}
	return strconv.Itoa(int(p))
}

// IsICMP reports whether p is ICMP or ICMPv6 (whose "port" is the type).
func IsICMP(p policy.Proto) bool { return p == policy.ProtoICMP || p == policy.ProtoICMPv6 }
