package policyapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// The rough edges of policies copied from Cilium's own examples.

// topLevelDescription has its description beside spec, as Cilium's Star
// Wars demo and minikube getting-started policies do.
const topLevelDescription = `apiVersion: "cilium.io/v2"
kind: CiliumNetworkPolicy
description: "L3-L4 policy: only the fleet lands on the station"
metadata:
  name: "landing"
spec:
  endpointSelector:
    matchLabels: {org: fleet, class: station}
  ingress:
  - fromEndpoints:
    - matchLabels: {org: fleet}
    toPorts:
    - ports: [{port: "80", protocol: TCP}]
`

func TestTopLevelDescriptionIsAcceptedWithAWarning(t *testing.T) {
	pols, err := policyapi.ParseDocuments("sw.yaml", []byte(topLevelDescription), opts)
	if err != nil {
		t.Fatalf("ParseDocuments: %v", err)
	}
	p := pols[0]
	if got := p.Rules[0].Description; got != "L3-L4 policy: only the fleet lands on the station" {
		t.Errorf("rule description %q", got)
	}
	want := "sw.yaml: document 1 (CiliumNetworkPolicy default/landing): description: belongs in spec.description (Kubernetes drops it here); taken as the description of the policy's rules"
	if len(p.Warnings) != 1 || p.Warnings[0].String() != want {
		t.Errorf("warnings %v, want [%s]", p.Warnings, want)
	}

	t.Run("spec.description wins", func(t *testing.T) {
		doc := strings.Replace(topLevelDescription, "spec:\n", "spec:\n  description: own\n", 1)
		pols, err := policyapi.ParseDocuments("sw.yaml", []byte(doc), opts)
		if err != nil {
			t.Fatalf("ParseDocuments: %v", err)
		}
		if got := pols[0].Rules[0].Description; got != "own" || len(pols[0].Warnings) != 1 {
			t.Errorf("description %q, warnings %v; want own and a warning", got, pols[0].Warnings)
		}
	})
	t.Run("no warning without it", func(t *testing.T) {
		pols, err := policyapi.ParseDocuments("x.yaml", []byte(cnp("endpointSelector: {}\ndescription: here")), opts)
		if err != nil || len(pols[0].Warnings) != 0 {
			t.Errorf("warnings %v, error %v; want none", pols[0].Warnings, err)
		}
	})
	t.Run("not a string", func(t *testing.T) {
		doc := strings.Replace(topLevelDescription, `description: "L3-L4 policy: only the fleet lands on the station"`, "description: [a]", 1)
		checkError(t, parseErr(t, doc), "test.yaml: document 1 (CiliumNetworkPolicy default/landing): ", "description: must be a string")
	})
	t.Run("still unknown in a NetworkPolicy", func(t *testing.T) {
		doc := "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\ndescription: x\nmetadata: {name: np}\nspec: {podSelector: {}}\n"
		checkError(t, parseErr(t, doc), "test.yaml: document 1 (NetworkPolicy default/np): ", "description: unknown field")
	})
}

func TestExtendedProtocolsAreNotSupported(t *testing.T) {
	for _, proto := range []string{"VRRP", "vrrp", "IGMP", "IPIP", "IPV6", "GRE", "ESP", "AH"} {
		t.Run(proto, func(t *testing.T) {
			for _, ports := range []string{"[{protocol: " + proto + "}]", "[{port: \"0\", protocol: " + proto + "}]"} {
				err := parseErr(t, cnp("endpointSelector: {}\ningress:\n- fromEntities: [cluster]\n  toPorts: [{ports: "+ports+"}]"))
				if !errors.Is(err, policyapi.ErrUnsupported) {
					t.Errorf("%s: error %v is not ErrUnsupported", ports, err)
				}
				want := "spec.ingress[0].toPorts[0].ports[0].protocol: not supported: " + strings.ToUpper(proto) + " is one of Cilium's extended IP protocols"
				checkError(t, err, "test.yaml: document 1 (CiliumNetworkPolicy default/test): ", want)
				if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
					t.Errorf("%s: %d errors, want the protocol's alone:\n%v", ports, n, err)
				}
			}
		})
	}
}

func TestEntitiesNoneAndClusterMesh(t *testing.T) {
	t.Run("none selects nothing but isolates", func(t *testing.T) {
		r := parseRule(t, cnp("endpointSelector: {}\ningress:\n- fromEntities: [none]"))
		if !r.DefaultDeny.Ingress || len(r.Ingress) != 1 || len(r.Ingress[0].Peers) != 0 {
			t.Fatalf("rule %+v: want ingress default deny and one entry without peers", r)
		}
		for _, id := range identity.ReservedIdentities() {
			if allows(r.Ingress, id.Labels, 80, policyapi.ProtoTCP) {
				t.Errorf("none allows %s", id.Labels)
			}
		}
	})
	t.Run("cluster-mesh selects pods of every cluster, not the world", func(t *testing.T) {
		r := parseRule(t, cnp("endpointSelector: {}\negress:\n- toEntities: [cluster-mesh]"))
		for _, tc := range []struct {
			name string
			give bool
			want bool
		}{
			{"local pod", allows(r.Egress, pod(t, "cluster1", "shop", "app=web"), 80, policyapi.ProtoTCP), true},
			{"remote pod", allows(r.Egress, pod(t, "cluster2", "shop", "app=web"), 80, policyapi.ProtoTCP), true},
			{"remote node", allows(r.Egress, reserved(identity.ReservedRemoteNode), 80, policyapi.ProtoTCP), true},
			{"world", allows(r.Egress, reserved(identity.ReservedWorld), 80, policyapi.ProtoTCP), false},
			{"CIDR", allows(r.Egress, cidr("192.0.2.0/24"), 80, policyapi.ProtoTCP), false},
		} {
			if tc.give != tc.want {
				t.Errorf("%s: allowed %v, want %v", tc.name, tc.give, tc.want)
			}
		}
	})
}

func TestCIDRGroupRefIsReportedOnce(t *testing.T) {
	for _, field := range []string{"cidrGroupRef: office", "cidrGroupSelector: {matchLabels: {site: hq}}"} {
		t.Run(strings.SplitN(field, ":", 2)[0], func(t *testing.T) {
			err := parseErr(t, cnp("endpointSelector: {}\negress:\n- toCIDRSet: [{"+field+"}]"))
			lines := strings.Split(err.Error(), "\n")
			want := "test.yaml: document 1 (CiliumNetworkPolicy default/test): spec.egress[0].toCIDRSet[0]." + strings.SplitN(field, ":", 2)[0] + ": not supported: CIDR groups"
			if len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
				t.Errorf("error:\n%v\nwant exactly one line %q...", err, want)
			}
		})
	}
	t.Run("cidr still required without a group", func(t *testing.T) {
		err := parseErr(t, cnp("endpointSelector: {}\negress:\n- toCIDRSet: [{except: [10.0.0.0/9]}]"))
		checkError(t, err, "test.yaml: document 1 (CiliumNetworkPolicy default/test): ", "spec.egress[0].toCIDRSet[0].cidr: required")
	})
}

// parseRule parses one CiliumNetworkPolicy with one rule.
func parseRule(t *testing.T, doc string) *policyapi.Rule {
	t.Helper()
	pols, err := policyapi.ParseDocuments("test.yaml", []byte(doc), opts)
	if err != nil {
		t.Fatalf("ParseDocuments: %v", err)
	}
	return pols[0].Rules[0]
}
