package source_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/source"
)

func TestPrecedenceIsCiliums(t *testing.T) {
	var names []string
	for _, s := range source.All() {
		names = append(names, string(s))
	}
	want := "kube-apiserver local kvstore custom-resource k8s clustermesh directory api generated restored unspec"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("precedence = %s, want %s", got, want)
	}
}

func TestAllowOverwrite(t *testing.T) {
	tests := []struct {
		name           string
		existing, next source.Source
		want           bool
	}{
		{"same source", source.KVStore, source.KVStore, true},
		{"higher replaces lower", source.KVStore, source.Local, true},
		{"lower never replaces higher", source.Local, source.KVStore, false},
		{"only kube-apiserver replaces kube-apiserver", source.KubeAPIServer, source.Local, false},
		{"kube-apiserver replaces everything", source.Restored, source.KubeAPIServer, true},
		{"k8s does not replace custom-resource", source.CustomResource, source.Kubernetes, false},
		{"clustermesh replaces directory", source.Directory, source.ClusterMesh, true},
		{"generated does not replace api", source.LocalAPI, source.Generated, false},
		{"restored replaces nothing but itself and unspec", source.Generated, source.Restored, false},
		{"unknown ranks as unspec", source.Restored, source.Source("bogus"), false},
		{"anything replaces unspec", source.Unspec, source.Restored, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := source.AllowOverwrite(tc.existing, tc.next); got != tc.want {
				t.Errorf("AllowOverwrite(%s, %s) = %v, want %v", tc.existing, tc.next, got, tc.want)
			}
		})
	}
}

func TestCompareSortsHighestFirst(t *testing.T) {
	got := []source.Source{source.Generated, source.KVStore, source.KubeAPIServer, source.Local}
	slices.SortFunc(got, source.Compare)
	want := []source.Source{source.KubeAPIServer, source.Local, source.KVStore, source.Generated}
	if !slices.Equal(got, want) {
		t.Errorf("sorted = %v, want %v", got, want)
	}
}

func TestParse(t *testing.T) {
	if s, err := source.Parse("clustermesh"); err != nil || s != source.ClusterMesh {
		t.Errorf("Parse(clustermesh) = %q, %v", s, err)
	}
	if _, err := source.Parse("etcd"); err == nil || !strings.Contains(err.Error(), `unknown source "etcd"`) {
		t.Errorf("Parse(etcd) = %v, want an error naming it", err)
	}
}
