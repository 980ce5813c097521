package policycell_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
)

const fqdnPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: client-egress, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: client}}
  egress:
  - toFQDNs: [{matchName: example.com}]
    toPorts: [{ports: [{port: "443", protocol: TCP}]}]
  - toEndpoints: [{matchLabels: {app: web}}]
`

// TestNotEnforcedFieldsShow: a policy with a toFQDNs peer is in force
// (its other rules apply) and the Policy line is a Warning naming it for
// as long as it is; an API import answers with the warning.
func TestNotEnforcedFieldsShow(t *testing.T) {
	dir := t.TempDir()
	celltest.ReplaceFile(t, filepath.Join(dir, "fqdn.yaml"), fqdnPolicy)
	a := startPolicyAgent(t, "policy-dir="+dir)
	if got := a.ruleNames(); got != "client-egress" {
		t.Fatalf("rules = %q, want client-egress in force", got)
	}
	celltest.Eventually(t, "the Policy line names fqdn.yaml", func() bool {
		line := a.policyLine(t)
		return line.State == models.StateWarning && strings.Contains(line.Message, "not all enforced: file fqdn.yaml") &&
			strings.Contains(strings.Join(line.Details, "\n"), "spec.egress[0].toFQDNs: not enforced")
	})

	answer, err := a.client.PolicyImport(context.Background(), []byte(strings.ReplaceAll(fqdnPolicy, "client-egress", "api-egress")))
	if err != nil {
		t.Fatal(err)
	}
	if len(answer.Warnings) != 1 || !strings.Contains(answer.Warnings[0], "toFQDNs: not enforced") {
		t.Errorf("import answer warnings %q, want the toFQDNs one", answer.Warnings)
	}
	// The Policy line names the API import too, as soon as it is in
	// force (no probe interval to wait: 5 s would fail this), with the
	// new revision.
	rev := answer.Revision
	celltest.EventuallyWithin(t, "the Policy line names the API import", 2*time.Second, func() bool {
		line := a.policyLine(t)
		return strings.Contains(line.Message, "not all enforced: file fqdn.yaml, API import CiliumNetworkPolicy default/api-egress") &&
			strings.Contains(line.Message, fmt.Sprintf("revision %d,", rev))
	})
	if _, err := a.client.PolicyDelete(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	celltest.EventuallyWithin(t, "the API import's warning gone with its rules", 2*time.Second, func() bool {
		line := a.policyLine(t)
		return strings.HasSuffix(line.Message, "not all enforced: file fqdn.yaml")
	})

	if err := os.Remove(filepath.Join(dir, "fqdn.yaml")); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "the Policy line Ok once the file is gone", func() bool {
		return a.policyLine(t).State == models.StateOk
	})
}
