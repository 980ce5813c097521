package policyapi

import (
	"slices"
	"strconv"
	"strings"
)

// Protocol is the L4 protocol of a port rule.
type Protocol string

// Protocols.
const (
	ProtoTCP  Protocol = "TCP"
	ProtoUDP  Protocol = "UDP"
	ProtoSCTP Protocol = "SCTP"
	// ProtoAny is TCP, UDP and SCTP (Cilium's ANY; ICMP is never in it).
	ProtoAny Protocol = "ANY"
	// ProtoICMP and ProtoICMPv6 are the protocols of traffic that rules'
	// icmps match (never a port rule's protocol); a query on them carries
	// the ICMP message type where other protocols have the port.
	ProtoICMP   Protocol = "ICMP"
	ProtoICMPv6 Protocol = "ICMPv6"
)

// ICMPFamily returns the family of ICMP rules matching traffic of
// protocol p; ok is false for protocols other than ICMP and ICMPv6.
func (p Protocol) ICMPFamily() (f ICMPFamily, ok bool) {
	switch p {
	case ProtoICMP:
		return ICMPv4, true
	case ProtoICMPv6:
		return ICMPv6, true
	}
	return "", false
}

// Protocols returns the concrete protocols p stands for.
func (p Protocol) Protocols() []Protocol {
	if p == ProtoAny {
		return []Protocol{ProtoTCP, ProtoUDP, ProtoSCTP}
	}
	return []Protocol{p}
}

// Covers reports whether traffic of protocol proto is in p.
func (p Protocol) Covers(proto Protocol) bool {
	return p == proto || p == ProtoAny && proto != ProtoAny && slices.Contains(p.Protocols(), proto)
}

// PortProtocol is a port, a port range or a named port on a protocol.
type PortProtocol struct {
	// Port is the port, or the first of a range. 0 without a Name is
	// every port of the protocol.
	Port uint16 `json:"port,omitempty"`
	// EndPort is the last port of a range (>= Port), or 0 for one port.
	EndPort uint16 `json:"endPort,omitempty"`
	// Name is a named port (an IANA service name); the engine resolves
	// it per endpoint with Resolve. Port and EndPort are 0 then.
	Name string `json:"name,omitempty"`
	// Protocol is the protocol; ProtoAny for TCP, UDP and SCTP.
	Protocol Protocol `json:"protocol"`
}

// IsAllPorts reports whether p is every port of its protocol(s).
func (p PortProtocol) IsAllPorts() bool { return p.Name == "" && p.Port == 0 }

// Range returns the numeric ports of p, first to last inclusive: 0..65535
// for every port. It is meaningless for a named port (see Resolve).
func (p PortProtocol) Range() (first, last uint16) {
	switch {
	case p.IsAllPorts():
		return 0, 65535
	case p.EndPort > p.Port:
		return p.Port, p.EndPort
	}
	return p.Port, p.Port
}

// Covers reports whether traffic to port on proto is in p. A named port
// covers nothing until resolved.
func (p PortProtocol) Covers(port uint16, proto Protocol) bool {
	if p.Name != "" || !p.Protocol.Covers(proto) {
		return false
	}
	first, last := p.Range()
	return port >= first && port <= last
}

// String formats p as "6379/TCP", "8000-8100/TCP", "http/TCP" or
// "all/UDP".
func (p PortProtocol) String() string {
	var port string
	switch first, last := p.Range(); {
	case p.Name != "":
		port = p.Name
	case p.IsAllPorts():
		port = "all"
	case first != last:
		port = strconv.Itoa(int(first)) + "-" + strconv.Itoa(int(last))
	default:
		port = strconv.Itoa(int(first))
	}
	return port + "/" + string(p.Protocol)
}

// NamedPort is a port an endpoint declares by name (a container port of
// a pod). It is the one named-port type of the tree: the engine resolves
// rules against it, the endpoint manager keeps an endpoint's, and the
// ipcache carries peers' (its JSON is Cilium's, part of IPIdentityPair).
// The API's models.NamedPort is its wire form.
type NamedPort struct {
	Name     string   `json:"Name"`
	Port     uint16   `json:"Port"`
	Protocol Protocol `json:"Protocol"`
}

// Normalized returns p with its protocol in upper case, TCP when empty
// (a Kubernetes container port's default).
func (p NamedPort) Normalized() NamedPort {
	p.Protocol = Protocol(strings.ToUpper(string(p.Protocol)))
	if p.Protocol == "" {
		p.Protocol = ProtoTCP
	}
	return p
}

// Resolve returns the numeric ports p stands for on an endpoint that
// declares named. A numeric p is itself. A named p is each declared port
// with its name whose protocol p covers: a rule for "dns" on TCP does not
// match a "dns" port declared as UDP, as in Kubernetes.
func (p PortProtocol) Resolve(named []NamedPort) []PortProtocol {
	if p.Name == "" {
		return []PortProtocol{p}
	}
	var out []PortProtocol
	for _, np := range named {
		if np.Name == p.Name && np.Port != 0 && p.Protocol.Covers(np.Protocol) {
			out = append(out, PortProtocol{Port: np.Port, Protocol: np.Protocol})
		}
	}
	return out
}

// checkPortRange checks a numeric port and optional end port; it returns
// the problem with endPort, or "".
func checkPortRange(port, endPort int64) string {
	switch {
	case endPort == 0:
		return ""
	case port == 0:
		return "requires a non-zero numeric port"
	case endPort < port:
		return strconv.FormatInt(endPort, 10) + " is less than port " + strconv.FormatInt(port, 10)
	}
	return ""
}
