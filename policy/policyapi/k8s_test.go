package policyapi_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

const (
	nsShop   = "k8s:io.kubernetes.pod.namespace=shop"
	anyNS    = "k8s:io.kubernetes.pod.namespace"
	teamA    = "k8s:io.cilium.k8s.namespace.labels.team=a"
	subjAPI  = "subject: endpoints k8s:app=api," + nsShop
	subjShop = "subject: endpoints " + nsShop
)

func TestNetworkPolicyTranslation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts policyapi.Options
		give string
		want []string
	}{
		{
			name: "podSelector selects pods of the policy namespace; ingress is isolated by default",
			give: "podSelector: {matchLabels: {app: api}}",
			want: []string{subjAPI, "defaultDeny: ingress"},
		},
		{
			name: "an absent podSelector is every pod of the namespace",
			give: "policyTypes: [Ingress]",
			want: []string{subjShop, "defaultDeny: ingress"},
		},
		{
			name: "ingress [] denies every ingress",
			give: "podSelector: {}\ningress: []",
			want: []string{subjShop, "defaultDeny: ingress"},
		},
		{
			name: "a rule without from matches every peer",
			give: "podSelector: {}\ningress:\n- ports: [{port: 80}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: any ; ports 80/TCP"},
		},
		{
			name: "an empty from matches every peer",
			give: "podSelector: {}\ningress:\n- from: []",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: any"},
		},
		{
			name: "a podSelector peer is in the policy namespace",
			give: "podSelector: {}\ningress:\n- from: [{podSelector: {matchLabels: {app: web}}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] k8s:app=web," + inCluster + "," + nsShop},
		},
		{
			name: "an empty podSelector peer is every pod of the namespace",
			give: "podSelector: {}\ningress:\n- from: [{podSelector: {}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] " + inCluster + "," + nsShop},
		},
		{
			name: "a namespaceSelector peer selects namespace labels",
			give: "podSelector: {}\ningress:\n- from: [{namespaceSelector: {matchLabels: {team: a}}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] " + teamA + "," + inCluster},
		},
		{
			name: "an empty namespaceSelector is every namespace",
			give: "podSelector: {}\ningress:\n- from: [{namespaceSelector: {}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] " + inCluster + "," + anyNS},
		},
		{
			name: "namespaceSelector and podSelector in one peer must both match",
			give: "podSelector: {}\ningress:\n- from:\n  - namespaceSelector: {matchLabels: {team: a}}\n    podSelector: {matchLabels: {app: web}}",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] k8s:app=web," + teamA + "," + inCluster},
		},
		{
			name: "namespaceSelector and podSelector as two peers are alternatives",
			give: "podSelector: {}\ningress:\n- from:\n  - namespaceSelector: {matchLabels: {team: a}}\n  - podSelector: {matchLabels: {app: web}}",
			want: []string{subjShop, "defaultDeny: ingress",
				"ingress[0]: from[0] " + teamA + "," + inCluster + " | from[1] k8s:app=web," + inCluster + "," + nsShop},
		},
		{
			name: "namespaceSelector expressions are namespace labels too",
			give: "podSelector: {}\negress:\n- to: [{namespaceSelector: {matchExpressions: [{key: env, operator: NotIn, values: [dev]}]}}]",
			want: []string{subjShop, "defaultDeny: ingress,egress",
				"egress[0]: to[0] k8s:io.cilium.k8s.namespace.labels.env notin (dev)," + inCluster},
		},
		{
			name: "a podSelector naming a cluster is not narrowed to the local one",
			give: "podSelector: {}\ningress:\n- from: [{podSelector: {matchLabels: {io.cilium.k8s.policy.cluster: cluster2}}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] k8s:io.cilium.k8s.policy.cluster=cluster2," + nsShop},
		},
		{
			name: "without default-local-cluster pod peers match every cluster",
			opts: policyapi.Options{ClusterName: "cluster1"},
			give: "podSelector: {}\ningress:\n- from: [{podSelector: {}}]",
			want: []string{subjShop, "defaultDeny: ingress", "ingress[0]: from[0] " + nsShop},
		},
		{
			name: "ipBlock with except",
			give: "podSelector: {}\negress:\n- to: [{ipBlock: {cidr: 10.0.0.0/8, except: [10.1.0.0/16, 10.2.0.0/16]}}]",
			want: []string{subjShop, "defaultDeny: ingress,egress", "egress[0]: to[0] 10.0.0.0/8 except 10.1.0.0/16,10.2.0.0/16"},
		},
		{
			name: "ports: TCP by default, names, numbers, ranges, UDP, SCTP, every port",
			give: `podSelector: {}
ingress:
- ports:
  - port: http
  - port: 8443
  - {protocol: TCP, port: 8000, endPort: 8100}
  - {protocol: UDP, port: dns}
  - {protocol: SCTP, port: 3868}
  - {protocol: UDP}
  - {port: 9000, endPort: 9000}`,
			want: []string{subjShop, "defaultDeny: ingress",
				"ingress[0]: any ; ports http/TCP,8443/TCP,8000-8100/TCP,dns/UDP,3868/SCTP,all/UDP,9000/TCP"},
		},
		{
			name: "policyTypes default to Ingress, and Egress when there are egress rules",
			give: "podSelector: {}\negress:\n- to: [{podSelector: {}}]",
			want: []string{subjShop, "defaultDeny: ingress,egress", "egress[0]: to[0] " + inCluster + "," + nsShop},
		},
		{
			name: "an empty egress list does not default Egress",
			give: "podSelector: {}\negress: []",
			want: []string{subjShop, "defaultDeny: ingress"},
		},
		{
			name: "policyTypes Egress only: ingress rules still allow, ingress is not isolated",
			give: "podSelector: {}\npolicyTypes: [Egress]\ningress:\n- {}",
			want: []string{subjShop, "defaultDeny: egress", "ingress[0]: any"},
		},
		{
			name: "policyTypes both",
			give: "podSelector: {}\npolicyTypes: [Ingress, Egress]",
			want: []string{subjShop, "defaultDeny: ingress,egress"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			if tc.opts.ClusterName != "" {
				o = tc.opts
			}
			p := parseOne(t, o, knp(tc.give))
			checkLines(t, render(p.Rules[0]), tc.want)
		})
	}
}

func TestNetworkPolicyValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want string
	}{
		{"protocols are case-sensitive", "ingress:\n- ports: [{protocol: tcp, port: 80}]", `spec.ingress[0].ports[0].protocol: "tcp" is not TCP, UDP or SCTP`},
		{"ANY is Cilium's", "ingress:\n- ports: [{protocol: ANY, port: 80}]", `spec.ingress[0].ports[0].protocol: "ANY" is not TCP, UDP or SCTP`},
		{"port 0", "ingress:\n- ports: [{port: 0}]", "spec.ingress[0].ports[0].port: 0 is not an integer in 1..65535"},
		{"a quoted number is not a port name", "ingress:\n- ports: [{port: \"80\"}]",
			`spec.ingress[0].ports[0].port: "80" is not a valid port name: a port name must contain a letter`},
		{"upper-case port name", "ingress:\n- ports: [{port: HTTP}]", `spec.ingress[0].ports[0].port: "HTTP" is not a valid port name`},
		{"endPort without port", "ingress:\n- ports: [{endPort: 90}]", "spec.ingress[0].ports[0].endPort: requires port"},
		{"endPort with a named port", "ingress:\n- ports: [{port: http, endPort: 90}]",
			`spec.ingress[0].ports[0].endPort: requires a numeric port, not the named port "http"`},
		{"endPort below port", "ingress:\n- ports: [{port: 100, endPort: 90}]", "spec.ingress[0].ports[0].endPort: 90 is less than port 100"},
		{"an empty peer", "ingress:\n- from: [{}]", "spec.ingress[0].from[0]: one of podSelector, namespaceSelector or ipBlock is required"},
		{"ipBlock with a selector", "egress:\n- to: [{ipBlock: {cidr: 10.0.0.0/8}, podSelector: {}}]",
			"spec.egress[0].to[0].ipBlock: must not be set together with podSelector or namespaceSelector"},
		{"ipBlock address", "egress:\n- to: [{ipBlock: {cidr: 10.0.0.1}}]", `spec.egress[0].to[0].ipBlock.cidr: "10.0.0.1" is not a CIDR prefix`},
		{"ipBlock except outside", "egress:\n- to: [{ipBlock: {cidr: 10.0.0.0/16, except: [10.0.0.0/8]}}]",
			"spec.egress[0].to[0].ipBlock.except[0]: 10.0.0.0/8 is not a network strictly inside 10.0.0.0/16"},
		{"unknown policy type", "policyTypes: [Both]", `spec.policyTypes[0]: "Both" is not Ingress or Egress`},
		{"too many policy types", "policyTypes: [Ingress, Egress, Ingress]", "spec.policyTypes: may not list more than two policy types"},
		{"namespace selector keys have no source", "ingress:\n- from: [{namespaceSelector: {matchLabels: {\"k8s:team\": a}}}]",
			`spec.ingress[0].from[0].namespaceSelector.matchLabels: key "k8s:team": name must be alphanumerics`},
		{"a typo is an unknown field", "ingress:\n- form: []", "spec.ingress[0].form: unknown field"},
		{"Cilium fields are unknown", "endpointSelector: {}", "spec.endpointSelector: unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := parseErr(t, knp(tc.give))
			checkError(t, err, "test.yaml: document 1 (NetworkPolicy shop/test): ", tc.want)
		})
	}
}
