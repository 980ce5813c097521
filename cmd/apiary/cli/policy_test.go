package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/policycell"
)

func TestPolicyCommands(t *testing.T) {
	socket := startAgent(t, kvstorecell.Cell, identitycell.Cell, policycell.Cell)
	l4 := "../../../policy/testdata/l4-policy.yaml"

	code, out, errOut := run(t, socket, "policy", "import", l4)
	if code != 0 || out != "Revision: 2\n" {
		t.Fatalf("policy import = %d %q (stderr %q), want Revision: 2", code, out, errOut)
	}

	t.Run("import of a bad file names the document and field", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.yaml")
		if err := os.WriteFile(bad, []byte("apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: x}\nspec:\n  endpointSelector: {}\n  ingress: [{fromCIDR: [nope]}]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := run(t, socket, "policy", "import", bad)
		if code != 1 || out != "" || !strings.Contains(errOut, "document 1") || !strings.Contains(errOut, "fromCIDR") {
			t.Errorf("policy import bad.yaml = %d %q %q", code, out, errOut)
		}
	})
	t.Run("get", func(t *testing.T) {
		code, out, _ := run(t, socket, "policy", "get", "io.cilium.k8s.policy.name=l4-policy")
		if code != 0 || !strings.Contains(out, `"k8s:io.cilium.k8s.policy.name=l4-policy"`) || !strings.HasSuffix(out, "]\nRevision: 2\n") {
			t.Errorf("policy get = %d:\n%s", code, out)
		}
		code, out, _ = run(t, socket, "policy", "get", "-o", "json", "io.cilium.k8s.policy.name=other")
		var got models.PolicyRules
		if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Rules) != 0 || got.Revision != 2 {
			t.Errorf("policy get -o json other = %d %q", code, out)
		}
	})
	t.Run("trace", func(t *testing.T) {
		tests := []struct {
			name, src, dport, want string
		}{
			{"employee to 6379", "app=employee,ns:default", "6379/TCP", "ALLOWED"},
			{"stranger to 6379", "app=stranger,ns:default", "6379/TCP", "DENIED"},
			{"employee to 5432", "app=employee,ns:default", "5432/TCP", "DENIED"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				code, out, errOut := run(t, socket, "policy", "trace", "-s", tt.src, "-d", "app=protected-db,ns:default", "--dport", tt.dport)
				if code != 0 || !strings.HasSuffix(out, "Final verdict: "+tt.want+"\n") {
					t.Fatalf("policy trace = %d (stderr %q):\n%s", code, errOut, out)
				}
				if !regexp.MustCompile(`(?m)^Ingress of the destination: 1 rules considered, default deny true, verdict from the rules$`).MatchString(out) {
					t.Errorf("policy trace does not list the l4 rule:\n%s", out)
				}
			})
		}
		code, out, _ := run(t, socket, "policy", "trace", "-s", "app=employee,ns:default", "-d", "app=protected-db,ns:default", "--dport", "6379/TCP")
		if code != 0 || !strings.Contains(out, "CiliumNetworkPolicy default/l4-policy spec (api): allows: ingress[0]") {
			t.Errorf("policy trace does not show the matching entry:\n%s", out)
		}
	})
	t.Run("delete", func(t *testing.T) {
		code, _, errOut := run(t, socket, "policy", "delete")
		if code != 1 || !strings.Contains(errOut, "--all") {
			t.Errorf("policy delete without labels = %d %q", code, errOut)
		}
		code, out, _ := run(t, socket, "policy", "delete", "--all")
		if code != 0 || out != "Deleted 1 rules\nRevision: 3\n" {
			t.Errorf("policy delete --all = %d %q", code, out)
		}
	})
	t.Run("status line", func(t *testing.T) {
		code, out, _ := run(t, socket, "status")
		if code != 0 || !regexp.MustCompile(`(?m)^Policy:\s+Ok\s+\d+ rules, revision \d+, 0 files$`).MatchString(out) {
			t.Errorf("status = %d:\n%s\nwant a Policy line", code, out)
		}
	})
}
