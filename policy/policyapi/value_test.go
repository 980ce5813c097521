package policyapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"sigs.k8s.io/yaml"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// valueSeeds are JSON documents: every document of the examples, and
// documents each refused for a different reason.
func valueSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	seeds := [][]byte{
		[]byte(`{"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy","metadata":{"name":"p","namespace":"ns"},` +
			`"spec":{"endpointSelector":{},"ingress":[{"toPorts":[{"ports":[{"port":"99999","protocol":"TCP"}]}]}]}}`),
		[]byte(`{"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy","metadata":{"name":"p"},"spec":{"endpointSelector":{},"bogus":1}}`),
		[]byte(`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"p","namespace":"ns"},` +
			`"spec":{"podSelector":{},"ingress":[{"ports":[{"protocol":"XTP","port":80.5,"endPort":1e3}]}]}}`),
		[]byte(`{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"p","namespace":"ns"},` +
			`"spec":{"podSelector":{"matchLabels":{"app":"\u00e9\ud800"}},"policyTypes":["Ingress","Sideways"]}}`),
		[]byte(`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"cilium.io/v2","kind":"CiliumNetworkPolicy",` +
			`"metadata":{"name":"a","namespace":"ns"},"spec":{"endpointSelector":{}}},{"apiVersion":"cilium.io/v2",` +
			`"kind":"CiliumNetworkPolicy","metadata":{"name":"a","namespace":"ns"},"spec":{"endpointSelector":{}}}]}`),
		[]byte(`{"apiVersion":"cilium.io/v2","kind":"Unknown","metadata":{"name":"p"}}`),
		[]byte(`[1, 2]`),
		[]byte(`null`),
	}
	examples, _ := filepath.Glob("testdata/*.yaml")
	if len(examples) == 0 {
		tb.Fatal("no examples in testdata")
	}
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		if err != nil {
			tb.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				tb.Fatalf("%s: %v", ex, err)
			}
			seeds = append(seeds, j)
		}
	}
	return seeds
}

// TestParseValueLikeJSON: ParseValueContext of a decoded document gives
// what ParseDocuments gives for its JSON, policies and errors alike.
func TestParseValueLikeJSON(t *testing.T) {
	for i, seed := range valueSeeds(t) {
		t.Run(strconv.Itoa(i), func(t *testing.T) { checkParseValue(t, seed) })
	}
}

// FuzzParseValue checks ParseValueContext against ParseDocuments on
// arbitrary JSON documents.
func FuzzParseValue(f *testing.F) {
	for _, seed := range valueSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(checkParseValue)
}

// checkParseValue compares, for a JSON document decoded as Kubernetes'
// unstructured objects are (numbers int64 or float64),
// ParseValueContext with ParseDocuments of the JSON encoding/json writes
// for it (what the watchers parsed before).
func checkParseValue(t *testing.T, doc []byte) {
	v, err := decodeUnstructured(doc)
	if err != nil {
		return // not JSON, or a number neither int64 nor float64 holds
	}
	text, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	if bytes.ContainsFunc(text, yamlQuirk) || hasLongKey(v) {
		return // the JSON round trip refused or folded it; see ParseValueContext
	}
	want, wantErr := policyapi.ParseDocuments("obj", text, opts)
	wantJSON, _ := json.Marshal(want)
	before, _ := decodeUnstructured(doc)
	got, gotErr := policyapi.ParseValueContext(context.Background(), "obj", v, opts)
	if !reflect.DeepEqual(v, before) {
		t.Fatalf("ParseValueContext changed its input:\n%#v\nwas\n%#v", v, before)
	}
	if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
		t.Fatalf("error\n%v\nwant (from %s)\n%v", gotErr, text, wantErr)
	}
	if gotJSON, _ := json.Marshal(got); !bytes.Equal(gotJSON, wantJSON) {
		t.Fatalf("policies\n%s\nwant (from %s)\n%s", gotJSON, text, wantJSON)
	}
}

func decodeNumbers(doc []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// decodeUnstructured decodes numbers as k8s.io/apimachinery's
// unstructured JSON does: int64 when they are integers, else float64.
func decodeUnstructured(doc []byte) (any, error) {
	v, err := decodeNumbers(doc)
	if err != nil {
		return nil, err
	}
	return numbers(v)
}

func numbers(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			c, err := numbers(e)
			if err != nil {
				return nil, err
			}
			v[k] = c
		}
	case []any:
		for i, e := range v {
			c, err := numbers(e)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		return v.Float64()
	}
	return v, nil
}

// TestParseValueInvalidUTF8: keys and strings that are not valid UTF-8
// (which no JSON decoder produces, but a value built in Go may hold) are
// read as encoding/json writes them, without changing the input; two
// keys that become the same are refused.
func TestParseValueInvalidUTF8(t *testing.T) {
	value := func(bad any) map[string]any {
		return map[string]any{
			"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
			"metadata": map[string]any{"name": "p", "namespace": "ns", "annotations": map[string]any{"a\xff": "b\xfe"}},
			"spec":     map[string]any{"endpointSelector": map[string]any{"matchLabels": map[string]any{"app": bad}}},
		}
	}
	for name, bad := range map[string]any{"valid": "web", "invalid": "w\xffb"} {
		t.Run(name, func(t *testing.T) {
			v := value(bad)
			text, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := policyapi.ParseDocuments("obj", text, opts)
			got, gotErr := policyapi.ParseValueContext(context.Background(), "obj", v, opts)
			if fmtErr(gotErr) != fmtErr(wantErr) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			gotJSON, _ := json.Marshal(got)
			wantJSON, _ := json.Marshal(want)
			if !bytes.Equal(gotJSON, wantJSON) {
				t.Fatalf("policies\n%s\nwant\n%s", gotJSON, wantJSON)
			}
			if !reflect.DeepEqual(v, value(bad)) {
				t.Fatalf("the input changed: %#v", v)
			}
		})
	}
	v := value("web")
	v["metadata"].(map[string]any)["annotations"] = map[string]any{"a\xff": "1", "a\ufffd": "2"}
	_, err := policyapi.ParseValueContext(context.Background(), "obj", v, opts)
	if err == nil || !strings.Contains(err.Error(), "appears twice once converted to a string") {
		t.Fatalf("keys that convert to the same: %v, want them refused", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// yamlQuirk reports the characters that go.yaml.in/yaml/v2 refuses
// ("control characters are not allowed") or folds into a space (U+0085)
// when encoding/json writes them raw in a string.
// hasLongKey reports whether v holds a map key whose JSON text is near
// YAML's limit of 1024 characters for an implicit key: the JSON read as
// YAML refuses such an object ("did not find expected ',' or '}'"), as
// Cilium's YAML loader does; an object already decoded has no such limit.
func hasLongKey(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if text, _ := json.Marshal(k); utf8.RuneCount(text) > 1000 || hasLongKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range v {
			if hasLongKey(e) {
				return true
			}
		}
	}
	return false
}

func yamlQuirk(r rune) bool {
	return r >= 0x7f && r <= 0x9f || r == 0xfffe || r == 0xffff
}

// TestParseValueTakesStringsAsTheyAre: a C1 control character in an
// annotation (and U+0085 in the description), for which the JSON read as
// YAML refuses the object, does not refuse it.
func TestParseValueTakesStringsAsTheyAre(t *testing.T) {
	v := map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy",
		"metadata": map[string]any{"name": "p", "namespace": "ns", "annotations": map[string]any{"note": "x\u0080y"}},
		"spec":     map[string]any{"endpointSelector": map[string]any{}, "description": "a\u0085b"},
	}
	text, _ := json.Marshal(v)
	if _, err := policyapi.ParseDocuments("obj", text, opts); err == nil || !strings.Contains(err.Error(), "control characters are not allowed") {
		t.Fatalf("the JSON read as YAML: %v, want the YAML decoder's refusal", err)
	}
	pols, err := policyapi.ParseValueContext(context.Background(), "obj", v, opts)
	if err != nil || len(pols) != 1 {
		t.Fatalf("ParseValueContext = %d policies, %v; want the policy", len(pols), err)
	}
}
