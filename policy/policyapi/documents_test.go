package policyapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

const minimalCNP = "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: %s}\nspec: {endpointSelector: {}}\n"

func named(name string) string { return strings.Replace(minimalCNP, "%s", name, 1) }

func TestParseDocumentsSplitsLikeKubectl(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want []string
	}{
		{"one document", named("a"), []string{"a"}},
		{"leading separator and comments", "# policies\n---\n" + named("a") + "--- # next\n" + named("b"), []string{"a", "b"}},
		{"empty and comment-only documents are skipped", "---\n---\n# nothing\n---\n" + named("a") + "---\n\n---\nnull\n", []string{"a"}},
		{"a JSON document", `{"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy","metadata":{"name":"j"},"spec":{"endpointSelector":{}}}`, []string{"j"}},
		{"indented dashes are not a separator", named("a") + "  description: |\n    ---\n", nil},
		{"nothing", "", []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := policyapi.ParseDocuments("f.yaml", []byte(tc.give), opts)
			if tc.want == nil {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Name)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("policies %v, want %v", got, tc.want)
			}
		})
	}
}

func TestParseDocumentsErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want []string
	}{
		{
			name: "documents are numbered among the non-empty ones",
			give: "---\n# c\n---\n" + named("a") + "---\n" + named("b") + "---\n" + named("Bad_Name"),
			want: []string{`f.yaml: document 3 (CiliumNetworkPolicy default/Bad_Name): metadata.name: "Bad_Name": must be lower-case`},
		},
		{
			name: "every bad document is reported",
			give: named("x_1") + "---\n" + named("ok") + "---\n" + named("x_2"),
			want: []string{"f.yaml: document 1 (CiliumNetworkPolicy default/x_1): metadata.name", "f.yaml: document 3 (CiliumNetworkPolicy default/x_2): metadata.name"},
		},
		{
			name: "YAML errors give input line numbers",
			give: named("a") + "---\napiVersion: cilium.io/v2\nkind: [unterminated\n",
			want: []string{"f.yaml: document 2: invalid YAML: yaml: line 7:"},
		},
		{
			name: "duplicate keys",
			give: "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: a}\nspec: {endpointSelector: {}}\nspec: {endpointSelector: {}}\n",
			want: []string{`f.yaml: document 1: invalid YAML:`, `"spec" already set`},
		},
		{
			name: "text after a separator",
			give: named("a") + "--- apiVersion: v1\n",
			want: []string{"f.yaml: document 2: invalid document separator on line 5: only a comment may follow ---"},
		},
		{
			name: "a document is an object",
			give: "- a\n- b\n",
			want: []string{"f.yaml: document 1: a document must be an object, not a list"},
		},
		{
			name: "unknown kind",
			give: "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: x}\n",
			want: []string{`f.yaml: document 1: kind: "Ingress" is not a supported kind (want NetworkPolicy, CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy or a List of them)`},
		},
		{
			name: "missing kind and apiVersion",
			give: "metadata: {name: x}\n",
			want: []string{"f.yaml: document 1: apiVersion: required", "f.yaml: document 1: kind: required"},
		},
		{
			name: "wrong apiVersion",
			give: strings.Replace(named("a"), "cilium.io/v2", "cilium.io/v2alpha1", 1),
			want: []string{`f.yaml: document 1 (CiliumNetworkPolicy default/a): apiVersion: "cilium.io/v2alpha1" is not supported for CiliumNetworkPolicy (want cilium.io/v2)`},
		},
		{
			name: "missing name",
			give: "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {namespace: x}\nspec: {endpointSelector: {}}\n",
			want: []string{"f.yaml: document 1 (CiliumNetworkPolicy): metadata.name: required"},
		},
		{
			name: "bad namespace",
			give: "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: a, namespace: Shop}\nspec: {endpointSelector: {}}\n",
			want: []string{`f.yaml: document 1 (CiliumNetworkPolicy Shop/a): metadata.namespace: "Shop": must be lower-case`},
		},
		{
			name: "a clusterwide policy has no namespace",
			give: "apiVersion: cilium.io/v2\nkind: CiliumClusterwideNetworkPolicy\nmetadata: {name: a, namespace: x}\nspec: {endpointSelector: {}}\n",
			want: []string{"f.yaml: document 1 (CiliumClusterwideNetworkPolicy a): metadata.namespace: must not be set: a CiliumClusterwideNetworkPolicy is not namespaced"},
		},
		{
			name: "a policy needs a spec",
			give: "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: a}\n",
			want: []string{"f.yaml: document 1 (CiliumNetworkPolicy default/a): one of spec or specs is required"},
		},
		{
			name: "unknown top-level field",
			give: named("a") + "extra: 1\n",
			want: []string{"f.yaml: document 1 (CiliumNetworkPolicy default/a): extra: unknown field"},
		},
		{
			name: "duplicate policies",
			give: named("a") + "---\n" + named("b") + "---\n" + named("a"),
			want: []string{"f.yaml: document 3 (CiliumNetworkPolicy default/a): metadata.name: duplicate: CiliumNetworkPolicy default/a is also defined in f.yaml: document 1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := policyapi.ParseDocuments("f.yaml", []byte(tc.give), opts)
			if err == nil || ps != nil {
				t.Fatalf("ParseDocuments = %d policies, %v; want only an error", len(ps), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nlacks %q", err, w)
				}
			}
			var de *policyapi.DocumentError
			if !errors.As(err, &de) || len(de.Errs) == 0 {
				t.Errorf("error %v is not a *DocumentError with problems", err)
			}
		})
	}
}

func TestParseLists(t *testing.T) {
	list := `apiVersion: v1
kind: List
items:
- ` + strings.ReplaceAll(strings.TrimSpace(named("a")), "\n", "\n  ") + `
- apiVersion: networking.k8s.io/v1
  kind: NetworkPolicy
  metadata: {name: b, namespace: shop}
  spec: {podSelector: {}}
`
	ps, err := policyapi.ParseDocuments("l.yaml", []byte(list), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].String() != "CiliumNetworkPolicy default/a" || ps[1].String() != "NetworkPolicy shop/b" ||
		ps[1].Source != "l.yaml: document 1 items[1]" {
		t.Errorf("policies %v (%s)", ps, ps[len(ps)-1].Source)
	}

	typed := "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicyList\nitems:\n- metadata: {name: c}\n  spec: {podSelector: {}}\n"
	ps, err = policyapi.ParseDocuments("l.yaml", []byte(typed), opts)
	if err != nil || len(ps) != 1 || ps[0].Kind != policyapi.KindNetworkPolicy {
		t.Errorf("typed list: %v, %v", ps, err)
	}

	for _, tc := range []struct {
		name string
		give string
		want string
	}{
		{"a bad item rejects the list", strings.Replace(list, "spec: {podSelector: {}}", "spec: {podSelector: {}, bad: 1}", 1),
			"l.yaml: document 1 items[1] (NetworkPolicy shop/b): spec.bad: unknown field"},
		{"lists do not nest", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: List, items: []}\n",
			`l.yaml: document 1 items[0]: kind: "List" is not a supported kind`},
		{"typed list of the wrong kind", "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicyList\nitems:\n- {apiVersion: networking.k8s.io/v1, kind: NetworkPolicy, metadata: {name: x}, spec: {}}\n",
			"l.yaml: document 1 items[0] (NetworkPolicy default/x): kind: must be CiliumNetworkPolicy in a CiliumNetworkPolicyList"},
		{"list apiVersion", "apiVersion: v2\nkind: List\nitems: []\n", `l.yaml: document 1 (List): apiVersion: "v2" is not supported for List (want v1)`},
		{"list items", "apiVersion: v1\nkind: List\n", "l.yaml: document 1 (List): items: required"},
		{"duplicates within a list", "apiVersion: v1\nkind: List\nitems:\n- " + strings.ReplaceAll(strings.TrimSpace(named("a")), "\n", "\n  ") +
			"\n- " + strings.ReplaceAll(strings.TrimSpace(named("a")), "\n", "\n  ") + "\n",
			"l.yaml: document 1 items[1] (CiliumNetworkPolicy default/a): metadata.name: duplicate: CiliumNetworkPolicy default/a is also defined in l.yaml: document 1 items[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policyapi.ParseDocuments("l.yaml", []byte(tc.give), opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		give policyapi.Options
		want string
	}{
		{"defaults", policyapi.DefaultOptions(), ""},
		{"from the config", policyapi.NewOptions("c1", policyapi.DefaultConfig), ""},
		{"no cluster name", policyapi.Options{DefaultLocalCluster: true}, "cluster name is required"},
		{"bad cluster name", policyapi.Options{ClusterName: "a b"}, `cluster name "a b"`},
		{"bad default namespace", policyapi.Options{ClusterName: "c", DefaultNamespace: "Bad"}, `default namespace "Bad"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policyapi.ParseDocuments("f.yaml", []byte(named("a")), tc.give)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("ParseDocuments error = %v, want %q", err, tc.want)
			}
		})
	}
	o := policyapi.NewOptions("c1", policyapi.Config{PolicyDefaultLocalCluster: false})
	if o.DefaultLocalCluster || o.ClusterName != "c1" {
		t.Errorf("NewOptions = %+v", o)
	}
	p := parseOne(t, policyapi.Options{ClusterName: "c", DefaultNamespace: "team"}, named("a"))
	if p.Namespace != "team" {
		t.Errorf("namespace %q, want the default namespace team", p.Namespace)
	}
}
