package api_test

import (
	"slices"
	"testing"

	"github.com/apiary-net/apiary/policy/api"
)

func TestPortCovers(t *testing.T) {
	type probe struct {
		port  uint16
		proto api.Protocol
	}
	for _, tc := range []struct {
		name string
		give api.PortProtocol
		yes  []probe
		no   []probe
		str  string
	}{
		{"one port", api.PortProtocol{Port: 6379, Protocol: api.ProtoTCP},
			[]probe{{6379, api.ProtoTCP}}, []probe{{6379, api.ProtoUDP}, {6380, api.ProtoTCP}}, "6379/TCP"},
		{"range", api.PortProtocol{Port: 8000, EndPort: 8100, Protocol: api.ProtoUDP},
			[]probe{{8000, api.ProtoUDP}, {8100, api.ProtoUDP}}, []probe{{7999, api.ProtoUDP}, {8101, api.ProtoUDP}, {8050, api.ProtoTCP}}, "8000-8100/UDP"},
		{"any protocol", api.PortProtocol{Port: 53, Protocol: api.ProtoAny},
			[]probe{{53, api.ProtoTCP}, {53, api.ProtoUDP}, {53, api.ProtoSCTP}}, []probe{{54, api.ProtoUDP}}, "53/ANY"},
		{"all ports", api.PortProtocol{Protocol: api.ProtoSCTP},
			[]probe{{1, api.ProtoSCTP}, {65535, api.ProtoSCTP}}, []probe{{1, api.ProtoTCP}}, "all/SCTP"},
		{"named port covers nothing unresolved", api.PortProtocol{Name: "http", Protocol: api.ProtoTCP},
			nil, []probe{{80, api.ProtoTCP}, {0, api.ProtoTCP}}, "http/TCP"},
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
	declared := []api.NamedPort{
		{Name: "http", Port: 8080, Protocol: api.ProtoTCP},
		{Name: "dns", Port: 53, Protocol: api.ProtoUDP},
		{Name: "dns", Port: 5353, Protocol: api.ProtoTCP},
		{Name: "diameter", Port: 3868, Protocol: api.ProtoSCTP},
	}
	for _, tc := range []struct {
		name string
		give api.PortProtocol
		want []api.PortProtocol
	}{
		{"numeric is itself", api.PortProtocol{Port: 80, Protocol: api.ProtoTCP}, []api.PortProtocol{{Port: 80, Protocol: api.ProtoTCP}}},
		{"name and protocol", api.PortProtocol{Name: "http", Protocol: api.ProtoTCP}, []api.PortProtocol{{Port: 8080, Protocol: api.ProtoTCP}}},
		{"wrong protocol resolves to nothing", api.PortProtocol{Name: "http", Protocol: api.ProtoUDP}, nil},
		{"same name on two protocols, pick one", api.PortProtocol{Name: "dns", Protocol: api.ProtoUDP}, []api.PortProtocol{{Port: 53, Protocol: api.ProtoUDP}}},
		{"any takes every protocol", api.PortProtocol{Name: "dns", Protocol: api.ProtoAny},
			[]api.PortProtocol{{Port: 53, Protocol: api.ProtoUDP}, {Port: 5353, Protocol: api.ProtoTCP}}},
		{"sctp", api.PortProtocol{Name: "diameter", Protocol: api.ProtoSCTP}, []api.PortProtocol{{Port: 3868, Protocol: api.ProtoSCTP}}},
		{"undeclared name", api.PortProtocol{Name: "metrics", Protocol: api.ProtoTCP}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.give.Resolve(declared); !slices.Equal(got, tc.want) {
				t.Errorf("%s.Resolve = %v, want %v", tc.give, got, tc.want)
			}
		})
	}
}
