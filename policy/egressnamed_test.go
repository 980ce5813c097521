package policy_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

var (
	webTCP80   = policyapi.NamedPort{Name: "web", Port: 80, Protocol: policyapi.ProtoTCP}
	webTCP8080 = policyapi.NamedPort{Name: "web", Port: 8080, Protocol: policyapi.ProtoTCP}
	webTCP9090 = policyapi.NamedPort{Name: "web", Port: 9090, Protocol: policyapi.ProtoTCP}
	webUDP8080 = policyapi.NamedPort{Name: "web", Port: 8080, Protocol: policyapi.ProtoUDP}
)

// peerEndpoint is an endpoint of a peer identity declaring ports.
type peerEndpoint struct {
	key   string
	id    identity.NumericIdentity
	ports []policyapi.NamedPort
}

func TestEgressNamedPortsResolvePerDestination(t *testing.T) {
	tests := []struct {
		name  string
		give  string // spec body after the endpoint selector (app: db)
		own   []policyapi.NamedPort
		peers []peerEndpoint
		want  []packet
	}{
		{
			name:  "the destination's number, not the source's",
			give:  "  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web}]}]\n",
			own:   []policyapi.NamedPort{webTCP80},
			peers: []peerEndpoint{{"employee-0", employee.ID, []policyapi.NamedPort{webTCP8080}}},
			want: []packet{
				{employee.ID, policy.Egress, policy.ProtoTCP, 8080, true},
				{employee.ID, policy.Egress, policy.ProtoTCP, 80, false},
			},
		},
		{
			name: "union over the endpoints of one identity",
			give: "  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web, protocol: TCP}]}]\n",
			peers: []peerEndpoint{
				{"employee-0", employee.ID, []policyapi.NamedPort{webTCP8080}},
				{"employee-1", employee.ID, []policyapi.NamedPort{webTCP9090, webUDP8080}},
				{"employee-2", employee.ID, nil},
			},
			want: []packet{
				{employee.ID, policy.Egress, policy.ProtoTCP, 8080, true},
				{employee.ID, policy.Egress, policy.ProtoTCP, 9090, true},
				{employee.ID, policy.Egress, policy.ProtoUDP, 8080, false},
				{employee.ID, policy.Egress, policy.ProtoTCP, 80, false},
			},
		},
		{
			name: "each selected identity its own numbers",
			give: "  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}, {matchLabels: {app: stranger}}]\n    toPorts: [{ports: [{port: web}]}]\n",
			peers: []peerEndpoint{
				{"employee-0", employee.ID, []policyapi.NamedPort{webTCP8080}},
				{"stranger-0", stranger.ID, []policyapi.NamedPort{webTCP9090}},
			},
			want: []packet{
				{employee.ID, policy.Egress, policy.ProtoTCP, 8080, true},
				{employee.ID, policy.Egress, policy.ProtoTCP, 9090, false},
				{stranger.ID, policy.Egress, policy.ProtoTCP, 9090, true},
				{stranger.ID, policy.Egress, policy.ProtoTCP, 8080, false},
			},
		},
		{
			name:  "any peer: every identity declaring the name, the world none",
			give:  "  egress:\n  - toPorts: [{ports: [{port: web}, {port: \"53\", protocol: UDP}]}]\n",
			peers: []peerEndpoint{{"employee-0", employee.ID, []policyapi.NamedPort{webTCP8080}}},
			want: []packet{
				{employee.ID, policy.Egress, policy.ProtoTCP, 8080, true},
				{stranger.ID, policy.Egress, policy.ProtoTCP, 8080, false},
				{outside.ID, policy.Egress, policy.ProtoTCP, 8080, false},
				{outside.ID, policy.Egress, policy.ProtoUDP, 53, true},
			},
		},
		{
			name: "a CIDR peer opens nothing by name",
			give: "  egress:\n  - toCIDR: [192.0.2.0/24]\n    toPorts: [{ports: [{port: web}]}]\n",
			own:  []policyapi.NamedPort{webTCP80},
			want: []packet{
				{outside.ID, policy.Egress, policy.ProtoTCP, 80, false},
				{outside.ID, policy.Egress, policy.ProtoTCP, 8080, false},
			},
		},
		{
			name: "egress deny by name, ingress still by the own port",
			give: "  ingress:\n  - fromEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web}]}]\n" +
				"  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n  egressDeny:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web}]}]\n",
			own:   []policyapi.NamedPort{webTCP80},
			peers: []peerEndpoint{{"employee-0", employee.ID, []policyapi.NamedPort{webTCP8080}}},
			want: []packet{
				{employee.ID, policy.Ingress, policy.ProtoTCP, 80, true},
				{employee.ID, policy.Ingress, policy.ProtoTCP, 8080, false},
				{employee.ID, policy.Egress, policy.ProtoTCP, 8080, false},
				{employee.ID, policy.Egress, policy.ProtoTCP, 80, true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(db, employee, stranger, outside)
			for _, p := range tt.peers {
				e.setPeerPorts(p.key, p.id, p.ports...)
			}
			e.repo.Add(parseRules(t, cnpHeader+tt.give)...)
			ms := e.endpoint(db, tt.own...).MapState()
			for _, p := range tt.want {
				if got := policy.Verdict(ms, p.peer, p.dir, p.proto, p.port); got != p.want {
					t.Errorf("Verdict(peer %d, %s, proto %d, port %d) = %v, want %v\nmap state: %v", p.peer, p.dir, p.proto, p.port, got, p.want, ms)
				}
			}
		})
	}
}

func TestEgressNamedPortsFollowPeerChanges(t *testing.T) {
	e := newEngine(db, employee, stranger)
	e.repo.Add(parseRules(t, cnpHeader+"  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web}]}]\n")...)
	ep := e.endpoint(db)
	defer ep.Detach()
	key := func(port uint16) policy.Key {
		return policy.Key{Identity: employee.ID, Direction: policy.Egress, Proto: policy.ProtoTCP, Port: port, PrefixLen: 16}
	}

	steps := []struct {
		name        string
		change      func()
		wantAdds    []policy.Key
		wantDeletes []policy.Key
	}{
		{
			name:     "a pod of the destination declares the name",
			change:   func() { e.setPeerPorts("employee-0", employee.ID, webTCP8080) },
			wantAdds: []policy.Key{key(8080)},
		},
		{
			name:     "a second pod numbers it differently",
			change:   func() { e.setPeerPorts("employee-1", employee.ID, webTCP9090) },
			wantAdds: []policy.Key{key(9090)},
		},
		{
			name:   "a pod of an identity the rule does not select",
			change: func() { e.setPeerPorts("stranger-0", stranger.ID, webTCP80) },
		},
		{
			name:        "the first pod goes",
			change:      func() { e.setPeerPorts("employee-0", employee.ID) },
			wantDeletes: []policy.Key{key(8080)},
		},
		{
			name:        "the destination identity goes",
			change:      func() { e.cache.OnIdentitiesChanged(deleted(employee)) },
			wantDeletes: []policy.Key{key(9090)},
		},
		{
			name:     "and comes back",
			change:   func() { e.cache.OnIdentitiesChanged(added(employee)) },
			wantAdds: []policy.Key{key(9090)},
		},
		{
			name:        "no source: names open nothing",
			change:      func() { e.repo.SetPeerNamedPorts(nil) },
			wantDeletes: []policy.Key{key(9090)},
		},
	}
	for _, s := range steps {
		s.change()
		ch := ep.ConsumeMapChanges()
		if len(ch.Adds) != len(s.wantAdds) || len(ch.Deletes) != len(s.wantDeletes) {
			t.Fatalf("%s: changes %+v, want adds %v deletes %v", s.name, ch, s.wantAdds, s.wantDeletes)
		}
		for _, k := range s.wantAdds {
			if _, ok := ch.Adds[k]; !ok {
				t.Fatalf("%s: changes %+v lack the add of %v", s.name, ch, k)
			}
		}
		for i, k := range s.wantDeletes {
			if ch.Deletes[i] != k {
				t.Fatalf("%s: changes %+v, want the delete of %v", s.name, ch, k)
			}
		}
	}
}

func TestEvaluateResolvesEgressNamesAgainstThePeer(t *testing.T) {
	rules := parseRules(t, cnpHeader+"  egress:\n  - toEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: web}]}]\n")
	subject := policy.Side{Labels: db.Labels, NamedPorts: []policyapi.NamedPort{webTCP80}}
	peer := policy.Side{Labels: employee.Labels, NamedPorts: []policyapi.NamedPort{webTCP8080}}
	tests := []struct {
		name string
		peer policy.Side
		port uint16
		want bool
	}{
		{name: "the peer's number", peer: peer, port: 8080, want: true},
		{name: "not the subject's", peer: peer, port: 80, want: false},
		{name: "a peer without ports", peer: policy.Side{Labels: employee.Labels}, port: 8080, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := policy.Evaluate(rules, subject, tt.peer, policy.Egress, tt.port, policyapi.ProtoTCP)
			if v.Allowed != tt.want {
				t.Errorf("Evaluate = %+v, want allowed %v", v, tt.want)
			}
		})
	}
}
