package policyapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// parseErr parses doc, which must fail, and returns the error.
func parseErr(t *testing.T, doc string) error {
	t.Helper()
	ps, err := policyapi.ParseDocuments("test.yaml", []byte(doc), opts)
	if err == nil {
		t.Fatalf("ParseDocuments succeeded with %d policies, want an error", len(ps))
	}
	if ps != nil {
		t.Errorf("ParseDocuments returned policies with an error")
	}
	return err
}

// checkError checks that err has a line with prefix+want.
func checkError(t *testing.T, err error, prefix, want string) {
	t.Helper()
	for line := range strings.SplitSeq(err.Error(), "\n") {
		if strings.HasPrefix(line, prefix) && strings.Contains(line[len(prefix):], want) {
			return
		}
	}
	t.Errorf("error:\n%v\nhas no line %q", err, prefix+want+"...")
}

func TestCiliumUnsupportedFields(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want string
	}{
		{"fromRequires", "endpointSelector: {}\ningress:\n- fromRequires: [{matchLabels: {env: prod}}]",
			"spec.ingress[0].fromRequires: not supported: requirement selectors"},
		{"toRequires", "endpointSelector: {}\negress:\n- toRequires: [{matchLabels: {env: prod}}]",
			"spec.egress[0].toRequires: not supported"},
		{"fromNodes", "endpointSelector: {}\ningress:\n- fromNodes: [{}]", "spec.ingress[0].fromNodes: not supported"},
		{"toGroups", "endpointSelector: {}\negress:\n- toGroups: [{aws: {}}]", "spec.egress[0].toGroups: not supported"},
		{"authentication", "endpointSelector: {}\ningress:\n- fromEntities: [all]\n  authentication: {mode: required}",
			"spec.ingress[0].authentication: not supported"},
		{"toFQDNs in a deny rule", "endpointSelector: {}\negressDeny:\n- toFQDNs: [{matchName: example.com}]",
			"spec.egressDeny[0].toFQDNs: not supported"},
		{"toServices in a deny rule", "endpointSelector: {}\negressDeny:\n- toServices: [{k8sService: {serviceName: x, namespace: y}}]",
			"spec.egressDeny[0].toServices: not supported"},
		{"listener", "endpointSelector: {}\negress:\n- toPorts: [{ports: [{port: \"80\"}], listener: {name: x}}]",
			"spec.egress[0].toPorts[0].listener: not supported"},
		{"serverNames", "endpointSelector: {}\negress:\n- toPorts: [{ports: [{port: \"443\"}], serverNames: [a.example]}]",
			"spec.egress[0].toPorts[0].serverNames: not supported"},
		{"terminatingTLS", "endpointSelector: {}\negress:\n- toPorts: [{ports: [{port: \"443\"}], terminatingTLS: {}}]",
			"spec.egress[0].toPorts[0].terminatingTLS: not supported"},
		{"CIDR groups", "endpointSelector: {}\negress:\n- toCIDRSet: [{cidrGroupRef: office}]",
			"spec.egress[0].toCIDRSet[0].cidrGroupRef: not supported"},
		{"log", "endpointSelector: {}\nlog: {value: x}", "spec.log: not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := parseErr(t, cnp(tc.give))
			checkError(t, err, "test.yaml: document 1 (CiliumNetworkPolicy default/test): ", tc.want)
			if !errors.Is(err, policyapi.ErrUnsupported) {
				t.Errorf("errors.Is(err, ErrUnsupported) = false for %v", err)
			}
		})
	}
}

func TestCiliumValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want string
	}{
		{"a typo is an unknown field", "endpointSelector: {}\ningress:\n- fromEndpoint: [{}]", "spec.ingress[0].fromEndpoint: unknown field"},
		{"no subject", "ingress: [{}]", "spec: one of endpointSelector or nodeSelector is required"},
		{"two subjects", "endpointSelector: {}\nnodeSelector: {}", "spec.nodeSelector: must not be set together with endpointSelector"},
		{"nodeSelector in a namespaced policy", "nodeSelector: {}", "spec.nodeSelector: only a CiliumClusterwideNetworkPolicy may select nodes"},
		{"subject in another namespace", "endpointSelector: {matchLabels: {k8s:io.kubernetes.pod.namespace: other}}",
			`spec.endpointSelector: selects namespace k8s:io.kubernetes.pod.namespace=other, but a namespaced policy only applies in its own namespace "default"`},
		{"invalid port name", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: http_x}]}]",
			`spec.ingress[0].toPorts[0].ports[0].port: "http_x" is not a port number or a valid port name`},
		{"port name too long", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: a-very-long-port-name}]}]",
			"spec.ingress[0].toPorts[0].ports[0].port: \"a-very-long-port-name\" is not a port number or a valid port name: a port name must be 1-15 characters"},
		{"port out of range", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: 70000}]}]",
			"spec.ingress[0].toPorts[0].ports[0].port: 70000 is not an integer in 0..65535"},
		{"port string out of range", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"99999\"}]}]",
			`spec.ingress[0].toPorts[0].ports[0].port: "99999" is not a port number in 0..65535`},
		{"port missing", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{protocol: TCP}]}]",
			`spec.ingress[0].toPorts[0].ports[0].port: required ("0" is every port)`},
		{"endPort below port", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"9000\", endPort: 8000}]}]",
			"spec.ingress[0].toPorts[0].ports[0].endPort: 8000 is less than port 9000"},
		{"endPort with a named port", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: http, endPort: 8000}]}]",
			`spec.ingress[0].toPorts[0].ports[0].endPort: requires a numeric port, not the named port "http"`},
		{"endPort with every port", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"0\", endPort: 8000}]}]",
			"spec.ingress[0].toPorts[0].ports[0].endPort: requires a non-zero numeric port"},
		{"ICMP in ports", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"0\", protocol: ICMP}]}]",
			`spec.ingress[0].toPorts[0].ports[0].protocol: "ICMP" is not TCP, UDP, SCTP or ANY; ICMP types go in icmps`},
		{"unknown protocol", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"1\", protocol: XTP}]}]",
			`spec.ingress[0].toPorts[0].ports[0].protocol: "XTP" is not TCP, UDP, SCTP or ANY`},
		{"empty ports", "endpointSelector: {}\ningress:\n- toPorts: [{ports: []}]", "spec.ingress[0].toPorts[0].ports: must not be empty"},
		{"too many ports", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [" + strings.Repeat("{port: \"1\"},", 41) + "]}]",
			"spec.ingress[0].toPorts[0].ports: at most 40 items are allowed"},
		{"icmps with toPorts", "endpointSelector: {}\ningress:\n- toPorts: [{ports: [{port: \"1\"}]}]\n  icmps: [{fields: [{type: 8}]}]",
			"spec.ingress[0].icmps: must not be set together with toPorts"},
		{"icmp type out of range", "endpointSelector: {}\ningress:\n- icmps: [{fields: [{type: 300}]}]",
			"spec.ingress[0].icmps[0].fields[0].type: 300 is not an integer in 0..255"},
		{"icmp name of the other family", "endpointSelector: {}\ningress:\n- icmps: [{fields: [{type: PacketTooBig}]}]",
			`spec.ingress[0].icmps[0].fields[0].type: "PacketTooBig" is neither a number in 0..255 nor an IPv4 ICMP type name`},
		{"icmp family", "endpointSelector: {}\ningress:\n- icmps: [{fields: [{type: 8, family: IPv5}]}]",
			`spec.ingress[0].icmps[0].fields[0].family: "IPv5" is not IPv4 or IPv6`},
		{"unknown entity", "endpointSelector: {}\negress:\n- toEntities: [wrold]",
			`spec.egress[0].toEntities[0]: "wrold" is not an entity (want one of all, cluster, cluster-mesh, health, host, ingress, init, kube-apiserver, none, remote-node, unmanaged, world, world-ipv4, world-ipv6)`},
		{"bad CIDR", "endpointSelector: {}\negress:\n- toCIDR: [10.0.0.0/33]", `spec.egress[0].toCIDR[0]: "10.0.0.0/33" is not an IP address or CIDR prefix`},
		{"CIDR set needs a prefix", "endpointSelector: {}\negress:\n- toCIDRSet: [{cidr: 10.0.0.1}]",
			`spec.egress[0].toCIDRSet[0].cidr: "10.0.0.1" is not a CIDR prefix (address/length)`},
		{"CIDR set needs cidr", "endpointSelector: {}\negress:\n- toCIDRSet: [{except: [10.0.0.0/16]}]", "spec.egress[0].toCIDRSet[0].cidr: required"},
		{"except outside", "endpointSelector: {}\negress:\n- toCIDRSet: [{cidr: 10.0.0.0/8, except: [192.168.0.0/16]}]",
			"spec.egress[0].toCIDRSet[0].except[0]: 192.168.0.0/16 is not a network strictly inside 10.0.0.0/8"},
		{"except equal", "endpointSelector: {}\negress:\n- toCIDRSet: [{cidr: 10.0.0.0/8, except: [10.0.0.0/8]}]",
			"spec.egress[0].toCIDRSet[0].except[0]: 10.0.0.0/8 is not a network strictly inside 10.0.0.0/8"},
		{"except other family", "endpointSelector: {}\negress:\n- toCIDRSet: [{cidr: 0.0.0.0/0, except: [\"::/1\"]}]",
			"spec.egress[0].toCIDRSet[0].except[0]: ::/1 is not a network strictly inside 0.0.0.0/0"},
		{"bad operator", "endpointSelector: {matchExpressions: [{key: a, operator: Equals, values: [b]}]}",
			`spec.endpointSelector.matchExpressions[0].operator: "Equals" is not In, NotIn, Exists or DoesNotExist`},
		{"In without values", "endpointSelector: {matchExpressions: [{key: a, operator: In}]}",
			"spec.endpointSelector.matchExpressions[0].values: must not be empty for operator In"},
		{"Exists with values", "endpointSelector: {matchExpressions: [{key: a, operator: Exists, values: [b]}]}",
			"spec.endpointSelector.matchExpressions[0].values: must be empty for operator Exists"},
		{"bad key", "endpointSelector: {matchLabels: {\"k8s:bad key\": x}}",
			`spec.endpointSelector.matchLabels: key "k8s:bad key": name must be alphanumerics`},
		{"unknown source", "endpointSelector: {matchLabels: {\"foo:app\": x}}",
			`spec.endpointSelector.matchLabels: key "foo:app": unknown label source "foo"`},
		{"unknown reserved identity", "endpointSelector: {}\ningress:\n- fromEndpoints: [{matchLabels: {\"reserved:hots\": \"\"}}]",
			`spec.ingress[0].fromEndpoints[0].matchLabels: key "reserved:hots": "hots" is not a reserved identity`},
		{"bad value", "endpointSelector: {matchLabels: {app: \"a b\"}}",
			`spec.endpointSelector.matchLabels: value "a b" of key "app": must be alphanumerics`},
		{"YAML 1.1 booleans are not strings", "endpointSelector: {matchLabels: {enabled: yes}}",
			`spec.endpointSelector.matchLabels: value of "enabled" must be a string, not a boolean`},
		{"enableDefaultDeny type", "endpointSelector: {}\nenableDefaultDeny: {ingress: maybe}",
			"spec.enableDefaultDeny.ingress: must be true or false, not a string"},
		{"rule label with an origin key", "endpointSelector: {}\nlabels: [{key: io.cilium.k8s.policy.name, value: x}]",
			`spec.labels[0].key: "io.cilium.k8s.policy.name" is set from the policy's metadata`},
		{"ingress not a list", "endpointSelector: {}\ningress: {fromEntities: [all]}", "spec.ingress: must be a list, not an object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := parseErr(t, cnp(tc.give))
			checkError(t, err, "test.yaml: document 1 (CiliumNetworkPolicy default/test): ", tc.want)
			if errors.Is(err, policyapi.ErrUnsupported) {
				t.Errorf("a validation error is ErrUnsupported: %v", err)
			}
		})
	}
}

func TestErrorNamesDocumentRuleAndField(t *testing.T) {
	doc := `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: fine, namespace: default}
spec: {podSelector: {}}
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: allow-db
  namespace: default
specs:
- endpointSelector: {}
- endpointSelector: {matchLabels: {app: db}}
  ingress:
  - toPorts:
    - ports:
      - port: http_x
      - port: "5432"
        protocol: TPC
`
	want := `policy.yaml: document 2 (CiliumNetworkPolicy default/allow-db): specs[1].ingress[0].toPorts[0].ports[0].port: "http_x" is not a port number or a valid port name: a port name must be lower-case alphanumerics or '-'` + "\n" +
		`policy.yaml: document 2 (CiliumNetworkPolicy default/allow-db): specs[1].ingress[0].toPorts[0].ports[1].protocol: "TPC" is not TCP, UDP, SCTP or ANY`
	_, err := policyapi.ParseDocuments("policy.yaml", []byte(doc), opts)
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
	var de *policyapi.DocumentError
	if !errors.As(err, &de) || de.Document != 2 || de.Kind != policyapi.KindCiliumNetworkPolicy || de.Name != "allow-db" || len(de.Errs) != 2 {
		t.Errorf("DocumentError = %+v", de)
	}
}

// TestCiliumNotEnforcedFields: toFQDNs and toServices peers and L7 rules
// are accepted with a warning that says what apiary makes of them: the
// peer selects nothing (the entry still makes egress default-deny), the
// L7 rule's ports apply at L4.
func TestCiliumNotEnforcedFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		give      string
		wantWarn  string
		wantPeers int
		wantPorts int
	}{
		{"toFQDNs", "endpointSelector: {}\negress:\n- toFQDNs: [{matchName: example.com}]\n  toPorts: [{ports: [{port: \"443\", protocol: TCP}]}]",
			"spec.egress[0].toFQDNs: not enforced: DNS-based peers need a DNS proxy", 0, 1},
		{"toServices", "endpointSelector: {}\negress:\n- toServices: [{k8sService: {serviceName: x, namespace: y}}]",
			"spec.egress[0].toServices: not enforced: service peers are not implemented", 0, 0},
		{"L7 rules", "endpointSelector: {}\ningress:\n- fromEndpoints: [{}]\n  toPorts:\n  - ports: [{port: \"80\", protocol: TCP}]\n    rules: {http: [{method: GET}]}",
			"spec.ingress[0].toPorts[0].rules: not enforced: L7 rules need a proxy", 1, 1},
		{"DNS rules", "endpointSelector: {}\negress:\n- toEndpoints: [{}]\n  toPorts:\n  - ports: [{port: \"53\", protocol: UDP}]\n    rules: {dns: [{matchPattern: \"*\"}]}",
			"spec.egress[0].toPorts[0].rules: not enforced", 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pols, err := policyapi.ParseDocuments("test.yaml", []byte(cnp(tc.give)), policyapi.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var warns []string
			for _, w := range pols[0].Warnings {
				warns = append(warns, w.String())
			}
			if len(warns) != 1 || !strings.Contains(warns[0], tc.wantWarn) {
				t.Fatalf("warnings %q, want one saying %q", warns, tc.wantWarn)
			}
			r := pols[0].Rules[0]
			entries := append(append([]policyapi.PeerRule(nil), r.Ingress...), r.Egress...)
			if len(entries) != 1 || len(entries[0].Peers) != tc.wantPeers || len(entries[0].Ports) != tc.wantPorts {
				t.Fatalf("entries %+v, want one with %d peers and %d ports", entries, tc.wantPeers, tc.wantPorts)
			}
		})
	}
}
