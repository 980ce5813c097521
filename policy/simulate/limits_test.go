package simulate_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/simulate"
)

// bombPolicy is a scenario whose one policy holds a string of size bytes
// and refs aliases to it.
func bombPolicy(size, refs int) string {
	return "policies:\n- apiVersion: cilium.io/v2\n  kind: CiliumNetworkPolicy\n  metadata: {name: p}\n" +
		"  spec:\n    description: &a \"" + strings.Repeat("x", size) + "\"\n    endpointSelector: {}\n" +
		"    ingress:\n" + strings.Repeat("    - *a\n", refs)
}

// Alias bombs in a scenario are refused with one line naming the limit,
// before they expand: in the scenario itself (its error messages quote
// values) and in a policy.
func TestLoadRefusesAliasBombs(t *testing.T) {
	labelsBomb := "endpoints:\n- &ep {name: a, namespace: x, labels: {k: \"" + strings.Repeat("v", 1<<20) + "\"}}\n" +
		strings.Repeat("- *ep\n", 999)
	for _, tt := range []struct {
		name string
		give string
		want string
	}{
		{"policy over the input limit", bombPolicy(1<<20, 999),
			"scenario.yaml: decode: too large: decodes to more than the limit of 16777216 bytes (16 MiB) set by --policy-max-input-size (YAML aliases count each time they are used)"},
		{"policy over the document limit", bombPolicy(16<<10, 999),
			"scenario.yaml: policies[0]: document 1: too large: decodes to more than the limit of 8388608 bytes (8 MiB) set by --policy-max-document-size (YAML aliases count each time they are used)"},
		{"endpoint labels", labelsBomb,
			"scenario.yaml: decode: too large: decodes to more than the limit of 16777216 bytes (16 MiB) set by --policy-max-input-size (YAML aliases count each time they are used)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err := simulate.Load("scenario.yaml", []byte(tt.give))
			runtime.ReadMemStats(&after)
			if !errors.Is(err, policyapi.ErrTooLarge) || err.Error() != tt.want {
				t.Errorf("Load = %.300v\nwant %s", err, tt.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 128<<20 {
				t.Errorf("refusing it allocated %d MiB, want under 128", alloc>>20)
			}
		})
	}
}

func TestParseScenarioLimits(t *testing.T) {
	small := policyapi.Limits{MaxDocumentSize: 100, MaxInputSize: 1000}
	if _, err := simulate.ParseScenarioLimits("s.yaml", []byte("cluster: c1\n# "+strings.Repeat("c", 1000)+"\n"), small); !errors.Is(err, policyapi.ErrTooLarge) ||
		!strings.HasPrefix(err.Error(), "s.yaml: too large: 1015 bytes, over the limit of 1000 bytes set by --policy-max-input-size") {
		t.Errorf("ParseScenarioLimits(1015 bytes) = %v", err)
	}
	s, err := simulate.ParseScenarioLimits("s.yaml", []byte(bombPolicy(10, 20)), small)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := simulate.New("s.yaml", s); !errors.Is(err, policyapi.ErrTooLarge) || !strings.Contains(err.Error(), "limit of 100 bytes set by --policy-max-document-size") {
		t.Errorf("New with a 100-byte document limit = %v", err)
	}
	if _, err := simulate.Load("s.yaml", []byte("a: &a [*a]\n")); err == nil || !strings.Contains(err.Error(), "s.yaml: decode: ") {
		t.Errorf("Load(recursive alias) = %v, want a decode error", err)
	}
}
