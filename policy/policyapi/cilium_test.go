package policyapi_test

import (
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

const (
	nsDefault = "k8s:io.kubernetes.pod.namespace=default"
	inCluster = "k8s:io.cilium.k8s.policy.cluster=cluster1"
)

func TestCiliumNetworkPolicyTranslation(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want []string
	}{
		{
			name: "bare keys are any source, the policy namespace is added",
			give: "endpointSelector:\n  matchLabels:\n    app: db",
			want: []string{"subject: endpoints any:app=db," + nsDefault, "defaultDeny: none"},
		},
		{
			name: "empty endpointSelector selects the policy namespace",
			give: "endpointSelector: {}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: none"},
		},
		{
			name: "sources and every operator",
			give: `endpointSelector:
  matchLabels:
    k8s:app: db
  matchExpressions:
  - {key: tier, operator: In, values: [b, a]}
  - {key: any:env, operator: Exists}
  - {key: k8s:old, operator: DoesNotExist}
  - {key: zone, operator: NotIn, values: ["1"]}`,
			want: []string{
				"subject: endpoints k8s:app=db,any:env," + nsDefault + ",!k8s:old,any:tier in (a,b),any:zone notin (1)",
				"defaultDeny: none",
			},
		},
		{
			name: "fromEndpoints is narrowed to the namespace and local cluster",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchLabels: {app: web}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] any:app=web," + inCluster + "," + nsDefault},
		},
		{
			name: "a peer naming a namespace keeps it",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchLabels: {k8s:io.kubernetes.pod.namespace: other}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] " + inCluster + ",k8s:io.kubernetes.pod.namespace=other"},
		},
		{
			name: "a peer selecting by namespace labels is not narrowed to the namespace",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchLabels: {io.cilium.k8s.namespace.labels.team: a}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] any:io.cilium.k8s.namespace.labels.team=a," + inCluster},
		},
		{
			name: "a peer naming a cluster keeps it",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchLabels: {app: web, io.cilium.k8s.policy.cluster: cluster2}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] any:app=web,any:io.cilium.k8s.policy.cluster=cluster2," + nsDefault},
		},
		{
			name: "a peer in every cluster",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchExpressions: [{key: io.cilium.k8s.policy.cluster, operator: Exists}]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] any:io.cilium.k8s.policy.cluster," + nsDefault},
		},
		{
			name: "a reserved peer is not narrowed",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints:\n  - matchLabels: {reserved:host: \"\"}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] reserved:host="},
		},
		{
			name: "an empty peer selector is the namespace in the local cluster",
			give: "endpointSelector: {}\negress:\n- toEndpoints: [{}]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: egress",
				"egress[0]: toEndpoints[0] " + inCluster + "," + nsDefault},
		},
		{
			name: "an explicitly empty peer list selects nothing",
			give: "endpointSelector: {}\ningress:\n- fromEndpoints: []\n  toPorts: [{ports: [{port: \"80\"}]}]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress", "ingress[0]: (no peers) ; ports 80/ANY"},
		},
		{
			name: "an empty entry allows nothing and denies by default",
			give: "endpointSelector: {}\ningress:\n- {}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress", "ingress[0]: (no peers)"},
		},
		{
			name: "ports without peers apply to every peer",
			give: "endpointSelector: {}\negress:\n- toPorts: [{ports: [{port: \"443\", protocol: TCP}]}]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: egress", "egress[0]: any ; ports 443/TCP"},
		},
		{
			name: "entities",
			give: "endpointSelector: {}\ningress:\n- fromEntities: [world, cluster]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: fromEntities[0] entity=world | fromEntities[1] entity=cluster"},
		},
		{
			name: "toCIDR takes prefixes and addresses, in canonical form",
			give: "endpointSelector: {}\negress:\n- toCIDR: [192.0.2.1, 10.1.2.3/8, \"2001:db8::/32\"]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: egress",
				"egress[0]: toCIDR[0] 192.0.2.1/32 | toCIDR[1] 10.0.0.0/8 | toCIDR[2] 2001:db8::/32"},
		},
		{
			name: "toCIDRSet with except",
			give: "endpointSelector: {}\negress:\n- toCIDRSet:\n  - cidr: 10.0.0.0/8\n    except: [10.96.0.0/12, 10.0.0.0/16]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: egress",
				"egress[0]: toCIDRSet[0] 10.0.0.0/8 except 10.96.0.0/12,10.0.0.0/16"},
		},
		{
			name: "ports: numbers, strings, names, ranges, protocols",
			give: `endpointSelector: {}
ingress:
- toPorts:
  - ports:
    - port: 80
    - {port: "443", protocol: tcp}
    - {port: HTTP-Alt, protocol: TCP}
    - {port: "8000", endPort: 8100, protocol: UDP}
    - {port: "0", protocol: SCTP}
    - {port: "53", endPort: 53, protocol: Any}
  - ports:
    - {port: "9090", protocol: TCP}`,
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress",
				"ingress[0]: any ; ports 80/ANY,443/TCP,http-alt/TCP,8000-8100/UDP,all/SCTP,53/ANY,9090/TCP"},
		},
		{
			name: "icmps by number and name",
			give: `endpointSelector: {}
egress:
- icmps:
  - fields:
    - type: 8
    - {type: EchoReply, family: IPv6}
    - {type: "3", family: IPv4}`,
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: egress", "egress[0]: any ; icmps IPv4/8,IPv6/129,IPv4/3"},
		},
		{
			name: "deny rules turn default deny on",
			give: "endpointSelector: {}\ningressDeny:\n- fromEntities: [world]\negressDeny:\n- toCIDR: [203.0.113.0/24]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress,egress",
				"ingressDeny[0]: fromEntities[0] entity=world", "egressDeny[0]: toCIDR[0] 203.0.113.0/24"},
		},
		{
			name: "enableDefaultDeny false adds allows only",
			give: "endpointSelector: {}\nenableDefaultDeny: {egress: false}\negress:\n- toEntities: [kube-apiserver]",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: none", "egress[0]: toEntities[0] entity=kube-apiserver"},
		},
		{
			name: "enableDefaultDeny true without rules",
			give: "endpointSelector: {}\nenableDefaultDeny: {ingress: true}",
			want: []string{"subject: endpoints " + nsDefault, "defaultDeny: ingress"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseOne(t, opts, cnp(tc.give))
			checkLines(t, render(p.Rules[0]), tc.want)
		})
	}
}

func TestClusterwideTranslation(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts policyapi.Options
		give string
		want []string
	}{
		{
			name: "the subject is not narrowed, a peer must be a pod",
			opts: opts,
			give: "endpointSelector: {matchLabels: {app: x}}\ningress:\n- fromEndpoints: [{matchLabels: {app: api}}]",
			want: []string{"subject: endpoints any:app=x", "defaultDeny: ingress",
				"ingress[0]: fromEndpoints[0] any:app=api," + inCluster + ",k8s:io.kubernetes.pod.namespace"},
		},
		{
			name: "rules for initialising endpoints do not require a namespace",
			opts: opts,
			give: "endpointSelector: {matchLabels: {reserved:init: \"\"}}\negress:\n- toEndpoints: [{}]",
			want: []string{"subject: endpoints reserved:init=", "defaultDeny: egress", "egress[0]: toEndpoints[0] " + inCluster},
		},
		{
			name: "nodeSelector makes a host policy",
			opts: opts,
			give: "nodeSelector: {matchLabels: {kubernetes.io/hostname: n1}}\ningress:\n- fromEntities: [remote-node]",
			want: []string{"subject: nodes any:kubernetes.io/hostname=n1", "defaultDeny: ingress", "ingress[0]: fromEntities[0] entity=remote-node"},
		},
		{
			name: "without default-local-cluster peers match every cluster",
			opts: policyapi.Options{ClusterName: "cluster1"},
			give: "endpointSelector: {}\ningress:\n- fromEndpoints: [{matchLabels: {app: api}}]",
			want: []string{"subject: endpoints ", "defaultDeny: ingress", "ingress[0]: fromEndpoints[0] any:app=api,k8s:io.kubernetes.pod.namespace"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parseOne(t, tc.opts, ccnp(tc.give))
			checkLines(t, render(p.Rules[0]), tc.want)
		})
	}
}

func TestCiliumPolicyMetadataAndLabels(t *testing.T) {
	doc := `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: two-rules
  namespace: shop
  uid: "1234"
  labels: {ignored: "metadata labels are bookkeeping"}
specs:
- endpointSelector: {}
  description: first
  labels:
  - {key: team, value: a}
  - {key: owner, value: b, source: k8s}
- endpointSelector: {matchLabels: {app: x}}
`
	p := parseOne(t, opts, doc)
	if p.Kind != policyapi.KindCiliumNetworkPolicy || p.Namespace != "shop" || p.Name != "two-rules" || p.UID != "1234" {
		t.Errorf("policy %s uid %q", p, p.UID)
	}
	wantOrigin := "k8s:io.cilium.k8s.policy.derived-from=CiliumNetworkPolicy,k8s:io.cilium.k8s.policy.name=two-rules," +
		"k8s:io.cilium.k8s.policy.namespace=shop,k8s:io.cilium.k8s.policy.uid=1234"
	if got := p.Labels.String(); got != wantOrigin {
		t.Errorf("policy labels %s, want %s", got, wantOrigin)
	}
	if len(p.Rules) != 2 || p.Rules[0].Field != "specs[0]" || p.Rules[1].Field != "specs[1]" {
		t.Fatalf("rules %+v", p.Rules)
	}
	if got, want := p.Rules[0].Labels.String(), wantOrigin+",k8s:owner=b,unspec:team=a"; got != want {
		t.Errorf("rule labels %s, want %s", got, want)
	}
	if p.Rules[0].Description != "first" || p.Rules[1].Labels.String() != wantOrigin {
		t.Errorf("rule 1 description %q, rule 2 labels %s", p.Rules[0].Description, p.Rules[1].Labels)
	}

	ccnp := parseOne(t, opts, "apiVersion: cilium.io/v2\nkind: CiliumClusterwideNetworkPolicy\nmetadata: {name: cw}\nspec: {endpointSelector: {}}\n")
	if got := ccnp.Labels.String(); got != "k8s:io.cilium.k8s.policy.derived-from=CiliumClusterwideNetworkPolicy,k8s:io.cilium.k8s.policy.name=cw" {
		t.Errorf("clusterwide labels %s", got)
	}
}
