package k8spolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	k8sclient "github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/k8spolicy"
	"github.com/apiary-net/apiary/policy/policycell"
)

// agent is the policy engine fed by the Kubernetes watchers, with its
// REST API and status lines.
type agent struct {
	client    *client.Client
	gate      k8sclient.CacheSync
	providers statusProviders
}

type statusProviders struct {
	cell.In

	All []status.Provider `group:"status-providers"`
}

func startAgent(t *testing.T, srv *k8stest.Server) *agent {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	a := &agent{client: client.New(socket)}
	t.Cleanup(a.client.Close)
	celltest.StartWithFlags(t, []string{"socket-path=" + socket, "node-name=node-a", "node-ip=192.0.2.10",
		"k8s-kubeconfig-path=" + srv.WriteKubeconfig(k8stest.AdminToken)},
		api.Cell, status.Cell, kvstorecell.Cell, localnode.Cell, identitycell.Cell, policycell.Cell,
		k8sclient.Cell, k8spolicy.Cell,
		celltest.Capture(&a.gate), cell.Invoke(func(p statusProviders) { a.providers = p }))
	return a
}

func (a *agent) probe(t *testing.T, name string) status.Report {
	t.Helper()
	for _, p := range a.providers.All {
		if p.Name == name {
			return p.Probe(context.Background())
		}
	}
	t.Fatalf("no status line %q", name)
	return status.Report{}
}

// rules returns the rules of GET /v1/policy carrying the policy name
// label k8s:io.cilium.k8s.policy.name=name.
func (a *agent) rules(t *testing.T, name string) []json.RawMessage {
	t.Helper()
	got, err := a.client.PolicyGet(context.Background(), []string{"k8s:io.cilium.k8s.policy.name=" + name})
	if err != nil {
		t.Fatalf("GET /v1/policy: %v", err)
	}
	return got.Rules
}

var cnpResource = k8sclient.CNPResource

// applyCNP creates or updates a CiliumNetworkPolicy from YAML.
func applyCNP(t *testing.T, dyn dynamic.Interface, doc string) {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	ri := dyn.Resource(cnpResource).Namespace(u.GetNamespace())
	ctx := context.Background()
	cur, err := ri.Get(ctx, u.GetName(), metav1.GetOptions{})
	if err == nil {
		u.SetResourceVersion(cur.GetResourceVersion())
		_, err = ri.Update(ctx, u, metav1.UpdateOptions{})
	} else {
		_, err = ri.Create(ctx, u, metav1.CreateOptions{})
	}
	if err != nil {
		t.Fatalf("apply %s: %v", u.GetName(), err)
	}
}

func cnp(name, port string) string {
	return fmt.Sprintf(`apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: %s, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: client}}]
    toPorts: [{ports: [{port: "%s", protocol: TCP}]}]
`, name, port)
}

// ruleText is the compact JSON of the rules, for substring checks.
func ruleText(rules []json.RawMessage) string {
	var b strings.Builder
	for _, r := range rules {
		var c bytes.Buffer
		_ = json.Compact(&c, r)
		fmt.Fprintf(&b, "%s\n", c.Bytes())
	}
	return b.String()
}

// TestCNPLifecycle: a CiliumNetworkPolicy applied, changed and deleted
// through the API server changes GET /v1/policy; deleting one object
// removes exactly its rules.
func TestCNPLifecycle(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	dyn := srv.Dynamic()
	applyCNP(t, dyn, cnp("keep", "53"))
	a := startAgent(t, srv)
	if err := a.gate.WaitForCacheSync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(a.rules(t, "keep")); n != 1 {
		t.Fatalf("pre-existing policy: %d rules at the gate, want 1", n)
	}

	applyCNP(t, dyn, cnp("web", "80"))
	celltest.Eventually(t, "the CNP's rule appears", func() bool {
		return strings.Contains(ruleText(a.rules(t, "web")), `"port":80,`)
	})
	applyCNP(t, dyn, cnp("web", "8080"))
	celltest.Eventually(t, "the CNP's rule changes", func() bool {
		text := ruleText(a.rules(t, "web"))
		return strings.Contains(text, `"port":8080,`) && !strings.Contains(text, `"port":80,`)
	})
	if err := dyn.Resource(cnpResource).Namespace("default").Delete(context.Background(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the CNP's rules go", func() bool { return len(a.rules(t, "web")) == 0 })
	if n := len(a.rules(t, "keep")); n != 1 {
		t.Fatalf("the other policy: %d rules, want 1", n)
	}
}

// TestInvalidPolicies: a NetworkPolicy with an invalid field is refused
// by the API server, naming the field; a CiliumNetworkPolicy the server
// stores (its CRD keeps the spec as given) but the decoder refuses is
// rejected by the agent, named in the "Policy" status line with the
// reason, while the other policies keep working; fixing it clears it.
func TestInvalidPolicies(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	a := startAgent(t, srv)
	ctx := context.Background()

	tcp := "XTP"
	bad := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bad-np", Namespace: "default"},
		Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: (*corev1Protocol)(&tcp), Port: ptr(intstr.FromInt32(80))}},
		}}},
	}
	_, err := srv.Clientset().NetworkingV1().NetworkPolicies("default").Create(ctx, bad, metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "spec.ingress[0].ports[0].protocol") {
		t.Fatalf("invalid NetworkPolicy: got %v, want a refusal naming spec.ingress[0].ports[0].protocol", err)
	}

	dyn := srv.Dynamic()
	applyCNP(t, dyn, cnp("good", "80"))
	applyCNP(t, dyn, cnp("broken", "99999"))
	celltest.Eventually(t, "the bad CNP is named in status", func() bool {
		r := a.probe(t, "Policy")
		return r.State == status.Warning && strings.Contains(r.Message, "rejected: CiliumNetworkPolicy default/broken") &&
			slices.ContainsFunc(r.Details, func(d string) bool { return strings.Contains(d, "99999") })
	})
	if len(a.rules(t, "good")) != 1 || len(a.rules(t, "broken")) != 0 {
		t.Fatalf("good: %d rules (want 1), broken: %d (want 0)", len(a.rules(t, "good")), len(a.rules(t, "broken")))
	}
	applyCNP(t, dyn, cnp("broken", "443"))
	celltest.Eventually(t, "the fixed CNP applies and status clears", func() bool {
		return len(a.rules(t, "broken")) == 1 && a.probe(t, "Policy").State == status.Ok
	})
}

// TestListingAppliedAsBatch: the policies already in the API server when
// the agent starts, one of them refused by the decoder, are applied as
// each kind's listing ends: at the gate the good ones are all in force
// and the bad one is named in status; deleting a listed object then
// removes exactly its rules.
func TestListingAppliedAsBatch(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	dyn := srv.Dynamic()
	for _, name := range []string{"one", "two", "three"} {
		applyCNP(t, dyn, cnp(name, "80"))
	}
	applyCNP(t, dyn, cnp("broken", "99999"))
	np := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "np", Namespace: "default"},
		Spec: networkingv1.NetworkPolicySpec{Ingress: []networkingv1.NetworkPolicyIngressRule{{
			Ports: []networkingv1.NetworkPolicyPort{{Port: ptr(intstr.FromString("http"))}},
		}}},
	}
	ctx := context.Background()
	if _, err := srv.Clientset().NetworkingV1().NetworkPolicies("default").Create(ctx, np, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	a := startAgent(t, srv)
	if err := a.gate.WaitForCacheSync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two", "three", "np"} {
		if n := len(a.rules(t, name)); n != 1 {
			t.Fatalf("listed policy %s: %d rules at the gate, want 1", name, n)
		}
	}
	if n := len(a.rules(t, "broken")); n != 0 {
		t.Fatalf("refused policy: %d rules, want 0", n)
	}
	celltest.Eventually(t, "the bad CNP is named in status", func() bool {
		r := a.probe(t, "Policy")
		return r.State == status.Warning && strings.Contains(r.Message, "4 Kubernetes objects, rejected: CiliumNetworkPolicy default/broken") &&
			slices.ContainsFunc(r.Details, func(d string) bool { return strings.Contains(d, "99999") })
	})

	if err := dyn.Resource(cnpResource).Namespace("default").Delete(ctx, "two", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the deleted CNP's rules go", func() bool { return len(a.rules(t, "two")) == 0 })
	for _, name := range []string{"one", "three", "np"} {
		if n := len(a.rules(t, name)); n != 1 {
			t.Fatalf("policy %s after deleting another: %d rules, want 1", name, n)
		}
	}
}
