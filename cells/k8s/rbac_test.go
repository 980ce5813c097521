package k8s_test

import (
	"context"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
