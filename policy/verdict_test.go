package policy_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

const cnpHeader = "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata:\n  name: test\nspec:\n  endpointSelector:\n    matchLabels:\n      app: db\n"

// packet is one traffic probe and the verdict expected for it.
type packet struct {
	peer  identity.NumericIdentity
	dir   policy.Direction
	proto policy.Proto
	port  uint16
	want  bool
}

var (
	db       = pod(1000, "app=db")
	employee = pod(1001, "app=employee")
	stranger = pod(1002, "app=stranger")
	inside   = cidrIdentity(1, "10.2.0.0/16")
	excepted = cidrIdentity(2, "10.1.2.0/24")
	outside  = cidrIdentity(3, "192.0.2.0/24")
)

func TestVerdict(t *testing.T) {
	tests := []struct {
		name  string
		give  string // spec body after the endpoint selector; "" is no policy
		named []policyapi.NamedPort
		want  []packet
	}{
		{
			name: "no policy allows everything",
			want: []packet{
				{stranger.ID, policy.Ingress, policy.ProtoTCP, 80, true},
				{stranger.ID, policy.Egress, policy.ProtoUDP, 53, true},
			},
		},
		{
			name: "L4 allow from endpoints, ingress default deny only",
			give: "  ingress:\n  - fromEndpoints:\n    - matchLabels: {app: employee}\n    toPorts:\n    - ports: [{port: \"6379\", protocol: TCP}]\n",
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoTCP, 6379, true},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 6380, false},
				{employee.ID, policy.Ingress, policy.ProtoUDP, 6379, false},
				{stranger.ID, policy.Ingress, policy.ProtoTCP, 6379, false},
				{stranger.ID, policy.Egress, policy.ProtoTCP, 443, true},
			},
		},
		{
			name: "deny beats allow",
			give: "  ingress:\n  - fromEntities: [all]\n  ingressDeny:\n  - fromEndpoints:\n    - matchLabels: {app: stranger}\n    toPorts:\n    - ports: [{port: \"22\", protocol: TCP}]\n",
			want: []packet{
				{stranger.ID, policy.Ingress, policy.ProtoTCP, 22, false},
				{stranger.ID, policy.Ingress, policy.ProtoTCP, 80, true},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 22, true},
			},
		},
		{
			name:  "named port resolved per endpoint",
			give:  "  ingress:\n  - fromEndpoints:\n    - matchLabels: {app: employee}\n    toPorts:\n    - ports: [{port: http, protocol: TCP}]\n",
			named: []policyapi.NamedPort{{Name: "http", Port: 8080, Protocol: policyapi.ProtoTCP}},
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoTCP, 8080, true},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 80, false},
			},
		},
		{
			name: "named port the endpoint does not declare allows nothing",
			give: "  ingress:\n  - fromEndpoints:\n    - matchLabels: {app: employee}\n    toPorts:\n    - ports: [{port: http, protocol: TCP}]\n",
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoTCP, 8080, false},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 80, false},
			},
		},
		{
			name: "port range and protocol ANY",
			give: "  egress:\n  - toEndpoints:\n    - matchLabels: {app: employee}\n    toPorts:\n    - ports: [{port: \"8000\", endPort: 8100}]\n",
			want: []packet{
				{employee.ID, policy.Egress, policy.ProtoTCP, 7999, false},
				{employee.ID, policy.Egress, policy.ProtoTCP, 8000, true},
				{employee.ID, policy.Egress, policy.ProtoUDP, 8050, true},
				{employee.ID, policy.Egress, policy.ProtoSCTP, 8100, true},
				{employee.ID, policy.Egress, policy.ProtoTCP, 8101, false},
				{employee.ID, policy.Egress, policy.ProtoICMP, 8, false},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 1, true},
			},
		},
		{
			name: "port range to the last port",
			give: "  ingress:\n  - fromEndpoints:\n    - matchLabels: {app: employee}\n    toPorts:\n    - ports: [{port: \"1\", endPort: 65535, protocol: UDP}]\n",
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoUDP, 0, false},
				{employee.ID, policy.Ingress, policy.ProtoUDP, 1, true},
				{employee.ID, policy.Ingress, policy.ProtoUDP, 32768, true},
				{employee.ID, policy.Ingress, policy.ProtoUDP, 65535, true},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 65535, false},
			},
		},
		{
			name: "CIDR set with except",
			give: "  egress:\n  - toCIDRSet:\n    - cidr: 10.0.0.0/8\n      except: [10.1.0.0/16]\n",
			want: []packet{
				{inside.ID, policy.Egress, policy.ProtoTCP, 443, true},
				{excepted.ID, policy.Egress, policy.ProtoTCP, 443, false},
				{outside.ID, policy.Egress, policy.ProtoTCP, 443, false},
				{employee.ID, policy.Egress, policy.ProtoTCP, 443, false},
			},
		},
		{
			name: "world entity selects CIDR identities",
			give: "  egress:\n  - toEntities: [world]\n",
			want: []packet{
				{outside.ID, policy.Egress, policy.ProtoTCP, 443, true},
				{identity.ReservedWorld, policy.Egress, policy.ProtoUDP, 53, true},
				{employee.ID, policy.Egress, policy.ProtoTCP, 443, false},
			},
		},
		{
			name: "enableDefaultDeny false only adds allows",
			give: "  enableDefaultDeny: {ingress: false}\n  ingress:\n  - fromEndpoints:\n    - matchLabels: {app: employee}\n",
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoTCP, 80, true},
				{stranger.ID, policy.Ingress, policy.ProtoTCP, 80, true},
			},
		},
		{
			name: "ICMP type",
			give: "  ingress:\n  - fromEntities: [cluster]\n    icmps:\n    - fields: [{type: 8, family: IPv4}]\n",
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoICMP, 8, true},
				{employee.ID, policy.Ingress, policy.ProtoICMP, 0, false},
				{identity.ReservedHost, policy.Ingress, policy.ProtoICMP, 8, true},
				{outside.ID, policy.Ingress, policy.ProtoICMP, 8, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(db, employee, stranger, inside, excepted, outside)
			if tt.give != "" {
				e.repo.Add(parseRules(t, cnpHeader+tt.give)...)
			}
			ms := e.endpoint(db, tt.named...).MapState()
			for _, p := range tt.want {
				if got := policy.Verdict(ms, p.peer, p.dir, p.proto, p.port); got != p.want {
					t.Errorf("Verdict(peer %d, %s, proto %d, port %d) = %v, want %v", p.peer, p.dir, p.proto, p.port, got, p.want)
				}
			}
		})
	}
}
