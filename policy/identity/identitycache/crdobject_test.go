package identitycache_test

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycache"
	"github.com/apiary-net/apiary/policy/labels"
)

var c1 = cluster.Info{ClusterName: "c1", ClusterID: 1, MaxConnectedClusters: 255}

func TestCiliumIdentityRoundTrip(t *testing.T) {
	lbls := labels.MustParseList("k8s:app=web", "k8s:io.kubernetes.pod.namespace=shop", "k8s:io.cilium.k8s.policy.cluster=c1")
	obj := identitycache.NewCiliumIdentity(65800, lbls)
	if obj.GetName() != "65800" || obj.GetLabels()["io.kubernetes.pod.namespace"] != "shop" || len(obj.GetLabels()) != 1 {
		t.Fatalf("object %v", obj.Object)
	}
	got, err := identitycache.DecodeCiliumIdentity(c1, obj)
	if err != nil || got.ID != 65800 || !got.Labels.Equal(lbls) {
		t.Fatalf("decode: %+v, %v", got, err)
	}
}

// TestDecodeCiliumIdentityRefuses: bad objects fail naming the field,
// with the kind of error the cache counts.
func TestDecodeCiliumIdentityRefuses(t *testing.T) {
	obj := func(name string, sec any) *unstructured.Unstructured {
		o := map[string]any{"metadata": map[string]any{"name": name}}
		if sec != nil {
			o["security-labels"] = sec
		}
		return &unstructured.Unstructured{Object: o}
	}
	for _, tc := range []struct {
		name string
		give *unstructured.Unstructured
		kind error
		want string
	}{
		{"name not an id", obj("web", map[string]any{"k8s:app": "web"}), identitycache.ErrMalformed, "metadata.name"},
		{"no security-labels", obj("65800", nil), identitycache.ErrMalformed, "field security-labels: missing"},
		{"value not a string", obj("65800", map[string]any{"k8s:app": int64(1)}), identitycache.ErrMalformed, `"k8s:app" is not "source:key"`},
		{"key without source", obj("65800", map[string]any{"app": "web"}), identitycache.ErrMalformed, `"app" is not "source:key"`},
		{"id of another cluster", obj("300", map[string]any{"k8s:app": "web"}), identitycache.ErrRefused, "outside the range"},
		{"labels of another cluster", obj("65800", map[string]any{"k8s:io.cilium.k8s.policy.cluster": "c2"}), identitycache.ErrRefused, `cluster "c2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := identitycache.DecodeCiliumIdentity(c1, tc.give)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %v naming %q", err, tc.kind, tc.want)
			}
		})
	}
}

// TestIdentitiesOfEndpoints: the GC's references are status.identity.id.
func TestIdentitiesOfEndpoints(t *testing.T) {
	cep := func(id any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"identity": map[string]any{"id": id}}}}
	}
	got := identitycache.IdentitiesOfEndpoints([]*unstructured.Unstructured{cep(int64(65800)), cep(int64(0)), cep("x"),
		{Object: map[string]any{}}})
	if _, ok := got[identity.NumericIdentity(65800)]; !ok || len(got) != 1 {
		t.Fatalf("used identities %v, want 65800 only", got)
	}
}
