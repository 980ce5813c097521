package identitycache

import (
	"testing"

	"github.com/apiary-net/apiary/policy/labels"
)

func TestKVStoreKeyOf(t *testing.T) {
	lbls := labels.FromSlice([]labels.Label{labels.MustParse("k8s:b=2"), labels.MustParse("k8s:a=1")})
	canonical := "k8s:a=1;k8s:b=2;"
	tests := []struct {
		name, give string
	}{
		{name: "canonical", give: canonical},
		{name: "unsorted", give: "k8s:b=2;k8s:a=1;"},
		{name: "no trailing separator", give: "k8s:a=1;k8s:b=2"},
		{name: "empty parts", give: ";k8s:a=1;;k8s:b=2;"},
		{name: "trailing garbage", give: canonical + "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kvstoreKeyOf(lbls, tt.give); got != canonical {
				t.Errorf("kvstoreKeyOf(%q) = %q, want %q", tt.give, got, canonical)
			}
		})
	}
}

func TestIsLabelSource(t *testing.T) {
	tests := []struct {
		give string
		want bool
	}{
		{"k8s", true}, {"cilium-generated", true}, {"a.b_c-9", true}, {"K8S", true},
		{"", false}, {"-k8s", false}, {".k8s", false}, {"k8s io", false}, {"k8s/x", false}, {"{", false},
	}
	for _, tt := range tests {
		if got := isLabelSource(tt.give); got != tt.want {
			t.Errorf("isLabelSource(%q) = %v, want %v", tt.give, got, tt.want)
		}
	}
}
