package monitor

import (
	"strconv"
	"strings"

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

var tcpFlagNames = []string{"FIN", "SYN", "RST", "PSH", "ACK", "URG", "ECE", "CWR"}

// TCPFlagNames names the TCP flags set in f (byte 13 of the TCP header)
// as the API and the CLI show them: "SYN|ACK"; "" for none.
func TCPFlagNames(f uint8) string {
	var names []string
	for i, n := range tcpFlagNames {
		if f&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	return strings.Join(names, "|")
}

// IsICMP reports whether p is ICMP or ICMPv6 (whose "port" is the type).
func IsICMP(p policy.Proto) bool { return p == policy.ProtoICMP || p == policy.ProtoICMPv6 }
