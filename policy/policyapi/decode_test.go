package policyapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// sigsDecode is how Kubernetes decodes a manifest, and how the parser
// decoded before it bounded sizes: sigs.k8s.io/yaml to JSON, then
// encoding/json with numbers kept. It is the oracle of the decoder.
func sigsDecode(data []byte) (any, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.UseNumber()
	var v any
	err = dec.Decode(&v)
	return v, err
}

// The decoder gives the values Kubernetes' decoding gives, YAML 1.1
// scalars included.
func TestDecodeYAMLLikeKubernetes(t *testing.T) {
	for _, give := range []string{
		"a: yes\nb: no\nc: on\nd: off\ne: y\nf: True\ng: ~\nh: null\ni: \"yes\"\n",
		"ints: [0x1F, 017, 0o17, 1_000, -12, +5, 9223372036854775807, 18446744073709551615, 0b101]\n",
		"floats: [1e3, 1.0, .5, -0.0, 1.5e-7, 123456789012345678901234567890, 6.02e+23]\n",
		"keys: {1: a, 2.5: b, true: c, x: d, 1e3: e}\n",
		"t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\n",
		"bin: !!binary gIGC\nstr: !!str 12\nint: !!int \"12\"\n",
		"base: &b {x: 1, y: 2}\nmerged: {<<: *b, z: 3}\n",
		"s: \"\\x80\\u00e9 <&> \\t\"\nfolded: >\n  a\n  b\nliteral: |\n  a\n  b\n",
		`{"json": {"n": 1.25, "l": [true, null, "x"]}}`,
		"- 1\n- [a, b]\n- {c: d}\n",
		"plain\n",
		"12\n",
	} {
		t.Run(strings.SplitN(give, "\n", 2)[0], func(t *testing.T) {
			want, werr := sigsDecode([]byte(give))
			got, err := policyapi.DecodeYAML([]byte(give), policyapi.Limits{})
			if werr != nil || err != nil {
				t.Fatalf("decode = %v, Kubernetes' = %v", err, werr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decode = %#v\nKubernetes' = %#v", got, want)
			}
		})
	}
}

func TestDecodeYAMLErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		give string
		want string
	}{
		{"NaN has no JSON form", "a: .nan\n", "invalid YAML: json: unsupported value: NaN"},
		{"duplicate keys", "a: 1\na: 2\n", `invalid YAML: yaml: unmarshal errors:`},
		{"keys equal as strings", "{1: a, \"1\": b}\n", `invalid YAML: key "1" appears twice once converted to a string`},
		{"null key", "? ~\n: a\n", "invalid YAML: unsupported map key of type <nil>"},
		{"excessive aliasing", nestedBomb, "invalid YAML: yaml: document contains excessive aliasing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policyapi.DecodeYAML([]byte(tc.give), policyapi.Limits{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("decode = %v, want an error starting %q", err, tc.want)
			}
		})
	}
}

// nestedBomb is the classic "billion laughs": each level lists the one
// below nine times.
var nestedBomb = func() string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol]\n")
	for i := 1; i < 10; i++ {
		b.WriteString("l" + string(rune('0'+i)) + ": &l" + string(rune('0'+i)) + " [")
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	return b.String()
}()

func TestDecodeYAMLSizeLimit(t *testing.T) {
	lim := policyapi.Limits{MaxDocumentSize: 1000, MaxInputSize: 1 << 20}
	for _, tc := range []struct {
		name string
		give string
		ok   bool
	}{
		{"small", "a: " + strings.Repeat("x", 900) + "\n", true},
		{"one large string", "a: " + strings.Repeat("x", 1001) + "\n", false},
		{"an alias used often", "a: &a " + strings.Repeat("x", 100) + "\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n", false},
		{"many small values", "[" + strings.Repeat("1, ", 600) + "1]\n", false},
		{"many keys", "{" + manyKeys(200) + "}\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := policyapi.DecodeYAML([]byte(tc.give), lim)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			want := "too large: decodes to more than the limit of 1000 bytes set by --policy-max-document-size (YAML aliases count each time they are used)"
			if !errors.Is(err, policyapi.ErrTooLarge) || err.Error() != want {
				t.Errorf("decode = %v, want %q", err, want)
			}
		})
	}
}

// manyKeys is n entries "k0: 1, k1: 1, ...".
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%d: 1, ", i)
	}
	return b.String()
}
