package scenariogen

import "github.com/apiary-net/apiary/policy/simulate"

// Label values of pods and namespaces.
var (
	appValues     = []string{"web", "api", "db", "cache"}
	tierValues    = []string{"front", "back"}
	versionValues = []string{"v1", "v2"}
	teamValues    = []string{"red", "blue"}
	envValues     = []string{"prod", "dev"}
	allNamespaces = []string{"ns-a", "ns-b", "ns-c"}
)

// namedPortVariants are the container ports pods may declare: one name
// with different numbers (and protocols) on different pods.
var namedPortVariants = map[string][]simulate.Port{
	"http":     {{Name: "http", Port: 80, Protocol: "TCP"}, {Name: "http", Port: 8080, Protocol: "TCP"}},
	"metrics":  {{Name: "metrics", Port: 9090, Protocol: "TCP"}, {Name: "metrics", Port: 9091, Protocol: "TCP"}},
	"dns":      {{Name: "dns", Port: 53, Protocol: "UDP"}, {Name: "dns", Port: 53, Protocol: "TCP"}, {Name: "dns", Port: 5353, Protocol: "UDP"}},
	"diameter": {{Name: "diameter", Port: 3868, Protocol: "SCTP"}, {Name: "diameter", Port: 3869, Protocol: "SCTP"}},
}

// portNames are the names rules use: the declared ones and one no pod
// declares.
var portNames = []string{"http", "metrics", "dns", "diameter", "nosuch"}

// CIDR peers, their excepts (strictly inside) and addresses that are no
// pod, inside and outside of them, in both families. 10.0.0.0/8 and
// fd00::/16 hold the pods: a CIDR peer never selects those.
var (
	cidrs = []string{"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "203.0.113.64/26", "10.0.0.0/8",
		"0.0.0.0/0", "198.51.100.7/32", "192.0.2.0/25", "2001:db8::/32", "2001:db8:1::/48", "fd00::/16", "::/0"}
	excepts = map[string][]string{
		"192.0.2.0/24":    {"192.0.2.128/25", "192.0.2.8/29"},
		"198.51.100.0/24": {"198.51.100.0/26", "198.51.100.7/32"},
		"203.0.113.0/24":  {"203.0.113.64/26"},
		"10.0.0.0/8":      {"10.99.0.0/16"},
		"0.0.0.0/0":       {"192.0.2.0/24", "10.0.0.0/8"},
		"192.0.2.0/25":    {"192.0.2.0/28"},
		"2001:db8::/32":   {"2001:db8:1::/48", "2001:db8::7/128"},
		"::/0":            {"2001:db8::/32"},
	}
	externalIPs = []string{"192.0.2.1", "192.0.2.130", "192.0.2.9", "198.51.100.7", "198.51.100.70", "203.0.113.5",
		"203.0.113.70", "8.8.8.8", "10.99.0.1", "2001:db8::1", "2001:db8::7", "2001:db8:1::1", "2001:db9::1", "fd00:99::1"}
)

// Ports: those rules name, and those of queries: policy ports, named
// port values, range edges and others.
var (
	rulePorts  = []int{80, 443, 53, 5432, 8080, 9090, 3868}
	rangeLows  = []int{8000, 8010, 9000, 9064, 50}
	rangeSizes = []int{10, 63, 89, 99, 100}
	queryPorts = []int{80, 443, 53, 5432, 8080, 8081, 9090, 9091, 5353, 3868, 3869, 8000, 8010, 8011, 8050, 8099,
		8100, 8101, 9000, 9063, 9064, 9127, 9128, 50, 55, 59, 60, 61, 7}
)

// icmpTypes are the ICMP and ICMPv6 types rules use, by number and by
// the names icmps rules accept (icmpTypeZero, ICMP type 0, only with
// Options.Divergent); queryICMPTypes, those of queries, add neighbour
// discovery (never policed) and an error type.
var (
	icmpTypes = map[string][]any{
		"IPv4": {8, "EchoRequest", 13},
		"IPv6": {128, "EchoRequest", 129, "EchoReply", 1},
	}
	icmpTypeZero   = []any{0, "EchoReply"}
	queryICMPTypes = map[string][]any{
		"IPv4": {8, "EchoRequest", 0, 13, 3},
		"IPv6": {128, "EchoRequest", 129, 1, 135},
	}
)
