package policycell_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policycell"
)

// policyAgent is a hive with the policy cell on a standalone identity
// allocator, the API server and the status collector.
type policyAgent struct {
	client  *client.Client
	repo    *policy.Repository
	alloc   identity.Allocator
	regen   policy.RegenerationRequests
	objects policy.Objects
}

func startPolicyAgent(t *testing.T, flags ...string) *policyAgent {
	t.Helper()
	return startPolicyAgentWith(t, nil, flags...)
}

// startPolicyAgentWith starts the policy agent with extra cells (stand-ins
// for the datapath's).
func startPolicyAgentWith(t *testing.T, extra []cell.Cell, flags ...string) *policyAgent {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	a := &policyAgent{client: client.New(socket)}
	t.Cleanup(a.client.Close)
	cells := []cell.Cell{api.Cell, status.Cell, kvstorecell.Cell, localnode.Cell, identitycell.Cell, policycell.Cell,
		celltest.Capture(&a.repo), celltest.Capture(&a.alloc), celltest.Capture(&a.regen), celltest.Capture(&a.objects)}
	celltest.StartWithFlags(t, append([]string{"socket-path=" + socket}, flags...), append(cells, extra...)...)
	return a
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const cidrPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: to-dns
spec:
  endpointSelector: {matchLabels: {app: web}}
  egress:
  - toCIDR: [10.1.0.0/16]
`

func TestRESTImportGetDelete(t *testing.T) {
	a := startPolicyAgent(t)
	ctx := context.Background()

	rev, err := a.client.PolicyPut(ctx, append(readFile(t, "../testdata/l4-policy.yaml"), "\n---\n"+cidrPolicy...))
	if err != nil || rev != 2 {
		t.Fatalf("PolicyPut = %d, %v; want revision 2", rev, err)
	}
	if requests, _ := a.regen.Stats(); requests != 1 {
		t.Errorf("regeneration requests after an import = %d, want 1", requests)
	}
	got, err := a.client.PolicyGet(ctx, nil)
	if err != nil || len(got.Rules) != 2 || got.Revision != 2 {
		t.Fatalf("PolicyGet = %+v, %v; want 2 rules at revision 2", got, err)
	}
	if !strings.Contains(string(got.Rules[0]), `"apiary:io.apiary.policy.source=api"`) {
		t.Errorf("rule %s lacks the api source label", got.Rules[0])
	}
	// The prefix of to-dns has a CIDR identity.
	if a.alloc.LookupIdentity(identity.CIDRLabels(netip.MustParsePrefix("10.1.0.0/16"))) == nil {
		t.Error("no CIDR identity for 10.1.0.0/16 after import")
	}

	t.Run("filter by labels", func(t *testing.T) {
		got, err := a.client.PolicyGet(ctx, []string{"io.cilium.k8s.policy.name=l4-policy"})
		if err != nil || len(got.Rules) != 1 || !strings.Contains(string(got.Rules[0]), "protected-db") {
			t.Errorf("PolicyGet(name=l4-policy) = %+v, %v", got, err)
		}
	})
	t.Run("bad document is rejected whole", func(t *testing.T) {
		bad := cidrPolicy + "\n---\napiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: bad}\nspec:\n  endpointSelector: {}\n  ingress: [{fromCIDR: [not-a-cidr]}]\n"
		_, err := a.client.PolicyPut(ctx, []byte(strings.Replace(bad, "to-dns", "other", 1)))
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest ||
			!strings.Contains(apiErr.Message, "document 2") || !strings.Contains(apiErr.Message, "fromCIDR") {
			t.Fatalf("PolicyPut(bad) = %v; want 400 naming document 2 and fromCIDR", err)
		}
		if requests, _ := a.regen.Stats(); requests != 1 {
			t.Errorf("regeneration requests after a rejected import = %d, want still 1", requests)
		}
		if rev := a.repo.Revision(); rev != 2 || len(a.repo.Rules()) != 2 {
			t.Errorf("after a rejected import: revision %d, %d rules; want 2 and 2", rev, len(a.repo.Rules()))
		}
	})
	t.Run("re-import replaces", func(t *testing.T) {
		rev, err := a.client.PolicyPut(ctx, []byte(cidrPolicy))
		if err != nil || rev != 3 || len(a.repo.Rules()) != 2 {
			t.Errorf("re-import = %d, %v, %d rules; want revision 3 and still 2 rules", rev, err, len(a.repo.Rules()))
		}
	})
	t.Run("delete by labels", func(t *testing.T) {
		out, err := a.client.PolicyDelete(ctx, []string{"io.cilium.k8s.policy.name=to-dns"})
		if err != nil || out.Deleted == nil || *out.Deleted != 1 || out.Revision != 4 {
			t.Fatalf("PolicyDelete(to-dns) = %+v, %v", out, err)
		}
		if a.alloc.LookupIdentity(identity.CIDRLabels(netip.MustParsePrefix("10.1.0.0/16"))) != nil {
			t.Error("CIDR identity of 10.1.0.0/16 kept after its rule went")
		}
	})
	t.Run("delete needs labels or all", func(t *testing.T) {
		_, _, err := a.client.Do(ctx, http.MethodDelete, "/v1/policy", nil)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("DELETE /v1/policy = %v; want 400", err)
		}
		out, err := a.client.PolicyDelete(ctx, nil)
		if err != nil || *out.Deleted != 1 || len(a.repo.Rules()) != 0 {
			t.Errorf("PolicyDelete(all) = %+v, %v; %d rules left", out, err, len(a.repo.Rules()))
		}
	})
}

func TestTrace(t *testing.T) {
	// The loader cell provides the policy maps' size; a stand-in here.
	a := startPolicyAgentWith(t, []cell.Cell{cell.Provide(func() policy.MapStateLimit { return 100 })})
	ctx := context.Background()
	if _, err := a.client.PolicyPut(ctx, readFile(t, "../testdata/l4-policy.yaml")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		src, dst []string
		dport    string
		want     bool
		ingress  []string
	}{
		{"employee to 6379", []string{"app=employee", "ns:default"}, []string{"k8s:app=protected-db", "ns:default"}, "6379/TCP", true, []string{"ingress[0]"}},
		{"stranger to 6379", []string{"app=stranger", "ns:default"}, []string{"app=protected-db", "ns:default"}, "6379/TCP", false, nil},
		{"employee to 5432", []string{"app=employee", "ns:default"}, []string{"app=protected-db", "ns:default"}, "5432", false, nil},
	}
	run := func(t *testing.T, from string) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: tt.src, Destination: tt.dst, DPort: tt.dport})
				if err != nil {
					t.Fatal(err)
				}
				if got.Allowed != tt.want || !got.Egress.Allowed || len(got.Ingress.Rules) != 1 || !got.Ingress.DefaultDeny {
					t.Fatalf("trace = %+v; want allowed %v, egress allowed, 1 ingress rule in default deny", got, tt.want)
				}
				if got.Egress.VerdictFrom != from || got.Ingress.VerdictFrom != from {
					t.Errorf("verdicts from %q and %q, want %q", got.Egress.VerdictFrom, got.Ingress.VerdictFrom, from)
				}
				if allows := got.Ingress.Rules[0].Allows; strings.Join(allows, ",") != strings.Join(tt.ingress, ",") {
					t.Errorf("ingress allows %v, want %v", allows, tt.ingress)
				}
			})
		}
	}
	labelsOf := func(kv ...string) labels.Labels {
		return labels.MustParseList(append(kv, "k8s:io.kubernetes.pod.namespace=default", "k8s:io.cilium.k8s.policy.cluster=default")...)
	}
	// No endpoint has these labels: the rules decide, and the trace
	// allocates no identity (it would be published to the cluster).
	t.Run("without identities", func(t *testing.T) { run(t, models.VerdictFromRules) })
	if a.alloc.LookupIdentity(labelsOf("k8s:app=employee")) != nil {
		t.Fatal("the trace allocated an identity")
	}
	// Once endpoints have them, the map states decide, the same way.
	for _, app := range []string{"employee", "stranger", "protected-db"} {
		if _, _, err := a.alloc.AllocateIdentity(ctx, labelsOf("k8s:app="+app)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("with identities", func(t *testing.T) { run(t, models.VerdictFromMapState) })
	t.Run("map state size against the datapath's --bpf-policy-map-max", func(t *testing.T) {
		got, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: []string{"app=employee", "ns:default"}, Destination: []string{"app=protected-db", "ns:default"}, DPort: "6379"})
		// protected-db: allow-all egress, 6379/TCP from employees;
		// employee: allow-all both ways.
		if err != nil || got.PolicyMapMax != 100 || got.Ingress.MapStateKeys != 2 || got.Egress.MapStateKeys != 2 || got.SourceIdentity == 0 {
			t.Errorf("trace = %+v, %v; want identities and 2 keys each of 100", got, err)
		}
	})
	t.Run("ns/pod needs the ipcache", func(t *testing.T) {
		_, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: []string{"default/web"}, Destination: []string{"app=b"}, DPort: "80"})
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, "resolved through the ipcache, which this agent does not run") {
			t.Errorf("trace from default/web = %v; want 400 saying it needs the ipcache", err)
		}
	})
	t.Run("bad port", func(t *testing.T) {
		_, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: []string{"app=a"}, Destination: []string{"app=b"}, DPort: "http"})
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("trace with dport http = %v; want 400", err)
		}
	})
}
