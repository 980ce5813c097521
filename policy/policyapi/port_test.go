package policyapi_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

func TestPortCovers(t *testing.T) {
	type probe struct {
		port  uint16
		proto policyapi.Protocol
	}
	for _, tc := range []struct {
		name string
		give policyapi.PortProtocol
		yes  []probe
		no   []probe
		str  string
	}{
		{"one port", policyapi.PortProtocol{Port: 6379, Protocol: policyapi.ProtoTCP},
			[]probe{{6379, policyapi.ProtoTCP}}, []probe{{6379, policyapi.ProtoUDP}, {6380, policyapi.ProtoTCP}}, "6379/TCP"},
		{"range", policyapi.PortProtocol{Port: 8000, EndPort: 8100, Protocol: policyapi.ProtoUDP},
			[]probe{{8000, policyapi.ProtoUDP}, {8100, policyapi.ProtoUDP}}, []probe{{7999, policyapi.ProtoUDP}, {8101, policyapi.ProtoUDP}, {8050, policyapi.ProtoTCP}}, "8000-8100/UDP"},
		{"any protocol", policyapi.PortProtocol{Port: 53, Protocol: policyapi.ProtoAny},
			[]probe{{53, policyapi.ProtoTCP}, {53, policyapi.ProtoUDP}, {53, policyapi.ProtoSCTP}}, []probe{{54, policyapi.ProtoUDP}}, "53/ANY"},
		{"all ports", policyapi.PortProtocol{Protocol: policyapi.ProtoSCTP},
			[]probe{{1, policyapi.ProtoSCTP}, {65535, policyapi.ProtoSCTP}}, []probe{{1, policyapi.ProtoTCP}}, "all/SCTP"},
		{"named port covers nothing unresolved", policyapi.PortProtocol{Name: "http", Protocol: policyapi.ProtoTCP},
			nil, []probe{{80, policyapi.ProtoTCP}, {0, policyapi.ProtoTCP}}, "http/TCP"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range tc.yes {
				if !tc.give.Covers(p.port, p.proto) {
					t.Errorf("%s does not cover %d/%s", tc.give, p.port, p.proto)
				}
			}
			for _, p := range tc.no {
				if tc.give.Covers(p.port, p.proto) {
					t.Errorf("%s covers %d/%s", tc.give, p.port, p.proto)
				}
			}
			if got := tc.give.String(); got != tc.str {
				t.Errorf("String() = %q, want %q", got, tc.str)
			}
		})
	}
}

func TestNamedPortResolve(t *testing.T) {
	declared := []policyapi.NamedPort{
		{Name: "http", Port: 8080, Protocol: policyapi.ProtoTCP},
		{Name: "dns", Port: 53, Protocol: policyapi.ProtoUDP},
		{Name: "dns", Port: 5353, Protocol: policyapi.ProtoTCP},
		{Name: "diameter", Port: 3868, Protocol: policyapi.ProtoSCTP},
	}
	for _, tc := range []struct {
		name string
		give policyapi.PortProtocol
		want []policyapi.PortProtocol
	}{
		{"numeric is itself", policyapi.PortProtocol{Port: 80, Protocol: policyapi.ProtoTCP}, []policyapi.PortProtocol{{Port: 80, Protocol: policyapi.ProtoTCP}}},
		{"name and protocol", policyapi.PortProtocol{Name: "http", Protocol: policyapi.ProtoTCP}, []policyapi.PortProtocol{{Port: 8080, Protocol: policyapi.ProtoTCP}}},
		{"wrong protocol resolves to nothing", policyapi.PortProtocol{Name: "http", Protocol: policyapi.ProtoUDP}, nil},
		{"same name on two protocols, pick one", policyapi.PortProtocol{Name: "dns", Protocol: policyapi.ProtoUDP}, []policyapi.PortProtocol{{Port: 53, Protocol: policyapi.ProtoUDP}}},
		{"any takes every protocol", policyapi.PortProtocol{Name: "dns", Protocol: policyapi.ProtoAny},
			[]policyapi.PortProtocol{{Port: 53, Protocol: policyapi.ProtoUDP}, {Port: 5353, Protocol: policyapi.ProtoTCP}}},
		{"sctp", policyapi.PortProtocol{Name: "diameter", Protocol: policyapi.ProtoSCTP}, []policyapi.PortProtocol{{Port: 3868, Protocol: policyapi.ProtoSCTP}}},
		{"undeclared name", policyapi.PortProtocol{Name: "metrics", Protocol: policyapi.ProtoTCP}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.give.Resolve(declared); !slices.Equal(got, tc.want) {
				t.Errorf("%s.Resolve = %v, want %v", tc.give, got, tc.want)
			}
		})
	}
}

func TestCheckPortName(t *testing.T) {
	for _, tt := range []struct {
		name string
		give string
		want string // "" for a valid name
	}{
		{"service name", "http", ""},
		{"digits and dashes", "h2c-8080", ""},
		{"fifteen characters", "abcdefghijklmno", ""},
		{"empty", "", "must be 1-15 characters"},
		{"sixteen characters", "abcdefghijklmnop", "must be 1-15 characters"},
		{"upper case", "HTTP", "must be lower-case alphanumerics or '-'"},
		{"underscore", "my_port", "must be lower-case alphanumerics or '-'"},
		{"leading dash", "-http", "must not start or end with '-' or contain '--'"},
		{"double dash", "ht--tp", "must not start or end with '-' or contain '--'"},
		{"digits only", "8080", "must contain a letter"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := policyapi.CheckPortName(tt.give); got != tt.want {
				t.Errorf("CheckPortName(%q) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

func TestNamedPortNormalized(t *testing.T) {
	for _, tt := range []struct {
		name string
		give policyapi.NamedPort
		want policyapi.NamedPort
	}{
		{"empty protocol is TCP", policyapi.NamedPort{Name: "http", Port: 80}, policyapi.NamedPort{Name: "http", Port: 80, Protocol: policyapi.ProtoTCP}},
		{"lower case", policyapi.NamedPort{Name: "dns", Port: 53, Protocol: "udp"}, policyapi.NamedPort{Name: "dns", Port: 53, Protocol: policyapi.ProtoUDP}},
		{"already normal", policyapi.NamedPort{Name: "s", Port: 9, Protocol: policyapi.ProtoSCTP}, policyapi.NamedPort{Name: "s", Port: 9, Protocol: policyapi.ProtoSCTP}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.give.Normalized(); got != tt.want {
				t.Errorf("Normalized() = %+v, want %+v", got, tt.want)
			}
		})
	}
}
