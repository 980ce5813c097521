package policy_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// TestEvaluateICMP checks the rule evaluation behind trace and simulate
// for ICMP traffic, whose port is the message type: an icmps entry of
// the family covers its type only, an L3 rule every type, a port rule
// none; deny beats allow as for ports.
func TestEvaluateICMP(t *testing.T) {
	rules := parseRules(t, cnpHeader+`  ingress:
  - fromEndpoints: [{matchLabels: {app: employee}}]
    icmps: [{fields: [{type: EchoRequest, family: IPv4}, {type: 128, family: IPv6}]}]
  - fromEndpoints: [{matchLabels: {app: employee}}]
    toPorts: [{ports: [{port: "0", protocol: ANY}]}]
  - fromEndpoints: [{matchLabels: {app: admin}}]
  ingressDeny:
  - fromEndpoints: [{matchLabels: {app: admin}}]
    icmps: [{fields: [{type: 13}]}]
`)
	subject := policy.Side{Labels: pod(1000, "app=db").Labels}
	employee := policy.Side{Labels: pod(1001, "app=employee").Labels}
	admin := policy.Side{Labels: pod(1002, "app=admin").Labels}
	tests := []struct {
		name  string
		peer  policy.Side
		proto policyapi.Protocol
		typ   uint16
		want  bool
	}{
		{name: "echo request by name", peer: employee, proto: policyapi.ProtoICMP, typ: 8, want: true},
		{name: "another type", peer: employee, proto: policyapi.ProtoICMP, typ: 13, want: false},
		{name: "the IPv6 type is not an IPv4 one", peer: employee, proto: policyapi.ProtoICMP, typ: 128, want: false},
		{name: "ICMPv6 echo request by number", peer: employee, proto: policyapi.ProtoICMPv6, typ: 128, want: true},
		{name: "the IPv4 type is not an ICMPv6 one", peer: employee, proto: policyapi.ProtoICMPv6, typ: 8, want: false},
		{name: "L3 rule: every type", peer: admin, proto: policyapi.ProtoICMPv6, typ: 129, want: true},
		{name: "deny beats the L3 rule", peer: admin, proto: policyapi.ProtoICMP, typ: 13, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := policy.Evaluate(rules, subject, tt.peer, policy.Ingress, tt.typ, tt.proto)
			if v.Allowed != tt.want {
				t.Errorf("Evaluate = %+v, want allowed %v", v, tt.want)
			}
		})
	}
}
