package k8s_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/cells/status"
)

// agentRole is the least-privilege ClusterRole of docs/kubernetes.md.
var agentRole = &rbacv1.ClusterRole{
	ObjectMeta: metav1.ObjectMeta{Name: "apiary-agent"},
	Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"pods", "namespaces", "nodes", "services"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumnetworkpolicies", "ciliumclusterwidenetworkpolicies"},
			Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumidentities"},
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
		{APIGroups: []string{"cilium.io"}, Resources: []string{"ciliumendpoints"},
			Verbs: []string{"get", "list", "watch", "create", "update", "delete"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"apiary-identity-gc"},
			Verbs: []string{"get", "update"}},
	},
}

// TestRBAC: as a service account bound to the documented ClusterRole,
// with RBAC on, every resource syncs and no API is forbidden.
func TestRBAC(t *testing.T) {
	srv := k8stest.Start(t)
	srv.InstallCRDs()
	ctx := context.Background()
	cs := srv.Clientset()
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, agentRole, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	token := srv.ServiceAccountToken("kube-system", "apiary-agent")
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "apiary-agent"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "apiary-agent"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: "kube-system", Name: "apiary-agent"}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	a := startAgent(t, "k8s-kubeconfig-path="+srv.WriteKubeconfig(token))
	for _, wait := range []func(context.Context) error{
		storeOf(a.pods), storeOf(a.nss), storeOf(a.nodes), storeOf(a.svcs), storeOf(a.slices),
		storeOf(a.nps), storeOf[*unstructured.Unstructured](a.cnps), storeOf[*unstructured.Unstructured](a.ccnps),
		storeOf[*unstructured.Unstructured](a.cids), storeOf[*unstructured.Unstructured](a.ceps),
	} {
		if err := wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r := a.probe(t, "Kubernetes APIs")
	if r.State != status.Ok || len(r.Details) > 0 {
		t.Fatalf("Kubernetes APIs: %+v", r)
	}
	if r := a.probe(t, "Kubernetes"); r.State != status.Ok {
		t.Fatalf("Kubernetes: %+v", r)
	}
	checkWrites(t, a.clientset)
}

// checkWrites does, with the agent's client, what identity allocation
// mode crd writes: a CiliumIdentity (created, marked, deleted), a
// CiliumEndpoint, and the garbage collector's Lease.
func checkWrites(t *testing.T, cs k8s.Clientset) {
	t.Helper()
	ctx := context.Background()
	cids := cs.Dynamic().Resource(k8s.CiliumIdentityResource)
	cid := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumIdentity",
		"metadata": map[string]any{"name": "70000"}, "security-labels": map[string]any{"k8s:app": "web"}}}
	if _, err := cids.Create(ctx, cid, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CiliumIdentity: %v", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"io.cilium.heartbeat":"now"}}}`)
	if _, err := cids.Patch(ctx, "70000", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("mark CiliumIdentity: %v", err)
	}
	if err := cids.Delete(ctx, "70000", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CiliumIdentity: %v", err)
	}
	ceps := cs.Dynamic().Resource(k8s.CiliumEndpointResource).Namespace("default")
	cep := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
		"metadata": map[string]any{"name": "web"}, "status": map[string]any{"identity": map[string]any{"id": int64(70000)}}}}
	if _, err := ceps.Create(ctx, cep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create CiliumEndpoint: %v", err)
	}
	if err := ceps.Delete(ctx, "web", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete CiliumEndpoint: %v", err)
	}
	e, err := k8s.NewLeaseElector(cs, "kube-system", "apiary-identity-gc", "node-a", time.Minute, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // create, then renew
		if leads, err := e.TryAcquireOrRenew(ctx); err != nil || !leads {
			t.Fatalf("take the identity GC lease: leads %v, %v", leads, err)
		}
	}
}

// storeOf waits for a resource's cache (within a minute).
func storeOf[T runtime.Object](r k8s.Resource[T]) func(context.Context) error {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		_, err := r.Store(ctx)
		return err
	}
}
