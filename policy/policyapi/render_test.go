package policyapi_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// opts are the options of an agent in cluster1 whose selectors default
// to it.
var opts = policyapi.Options{ClusterName: "cluster1", DefaultLocalCluster: true, DefaultNamespace: "default"}

// parseOne parses an input holding one policy, which must succeed.
func parseOne(t testing.TB, o policyapi.Options, doc string) *policyapi.Policy {
	t.Helper()
	ps, err := policyapi.ParseDocuments("test.yaml", []byte(doc), o)
	if err != nil {
		t.Fatalf("ParseDocuments:\n%v", err)
	}
	if len(ps) != 1 {
		t.Fatalf("got %d policies, want 1", len(ps))
	}
	return ps[0]
}

// render summarises a rule in lines a table can spell out:
//
//	subject: endpoints any:app=db,k8s:io.kubernetes.pod.namespace=default
//	defaultDeny: ingress
//	ingress[0]: fromEndpoints[0] any:app=web,... ; ports 80/TCP
//
// Entity peers show as "fromEntities[0] entity=world" (their selectors
// are tested with the entities), an entry without peers as "(no peers)".
func render(r *policyapi.Rule) []string {
	lines := []string{
		fmt.Sprintf("subject: %s %s", r.Subject.Kind, r.Subject.Selector),
		"defaultDeny: " + renderDefaultDeny(r.DefaultDeny),
	}
	for _, entries := range [][]policyapi.PeerRule{r.Ingress, r.IngressDeny, r.Egress, r.EgressDeny} {
		for _, e := range entries {
			lines = append(lines, renderEntry(e))
		}
	}
	return lines
}

func renderDefaultDeny(dd policyapi.DefaultDeny) string {
	var on []string
	if dd.Ingress {
		on = append(on, "ingress")
	}
	if dd.Egress {
		on = append(on, "egress")
	}
	if len(on) == 0 {
		return "none"
	}
	return strings.Join(on, ",")
}

func renderEntry(e policyapi.PeerRule) string {
	var peers []string
	for _, p := range e.Peers {
		var s string
		switch p.Kind {
		case policyapi.PeerAny:
			s = "any"
		case policyapi.PeerEntity:
			s = p.Field + " entity=" + string(p.Entity)
		case policyapi.PeerCIDR:
			s = p.Field + " " + p.CIDR.String()
		default:
			s = p.Field + " " + p.Selector.String()
		}
		if !slices.Contains(peers, s) {
			peers = append(peers, s)
		}
	}
	line := e.Field + ": " + strings.Join(peers, " | ")
	if len(peers) == 0 {
		line += "(no peers)"
	}
	if len(e.Ports) > 0 {
		ports := make([]string, len(e.Ports))
		for i, p := range e.Ports {
			ports[i] = p.String()
		}
		line += " ; ports " + strings.Join(ports, ",")
	}
	if len(e.ICMPs) > 0 {
		icmps := make([]string, len(e.ICMPs))
		for i, f := range e.ICMPs {
			icmps[i] = f.String()
		}
		line += " ; icmps " + strings.Join(icmps, ",")
	}
	return line
}

// cnp wraps the body of a spec (indented by two spaces) into a
// CiliumNetworkPolicy in namespace default.
func cnp(spec string) string {
	return "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata:\n  name: test\nspec:\n" + indent(spec)
}

// ccnp wraps a spec body into a CiliumClusterwideNetworkPolicy.
func ccnp(spec string) string {
	return "apiVersion: cilium.io/v2\nkind: CiliumClusterwideNetworkPolicy\nmetadata:\n  name: test\nspec:\n" + indent(spec)
}

// knp wraps a spec body into a NetworkPolicy in namespace shop.
func knp(spec string) string {
	return "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: test\n  namespace: shop\nspec:\n" + indent(spec)
}

func indent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// checkLines compares rendered lines with want.
func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
