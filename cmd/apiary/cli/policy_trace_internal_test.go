package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
)

// TestPrintTraceMapOverflow checks that a map state larger than the
// policy map is called out, and only then.
func TestPrintTraceMapOverflow(t *testing.T) {
	tr := &models.PolicyTrace{
		Source: []string{"k8s:app=a"}, Destination: []string{"k8s:app=b"}, DPort: "80/TCP", PolicyMapMax: 100, Allowed: true,
		SourcePod: "cluster1/x/a (10.0.0.1)", SourceIdentity: 300,
		Egress:  models.PolicyTraceDirection{Allowed: true, MapStateKeys: 100},
		Ingress: models.PolicyTraceDirection{Allowed: true, MapStateKeys: 101, DefaultDeny: true},
	}
	var out bytes.Buffer
	printTrace(&out, tr)
	want := []string{
		"Source:      cluster1/x/a (10.0.0.1), identity 300",
		"Tracing From: [k8s:app=a] => To: [k8s:app=b] Ports: [80/TCP]",
		"",
		"Egress of the source: 0 rules considered, default deny false, map state 100 keys of 100",
		"  => allowed",
		"",
		"Ingress of the destination: 0 rules considered, default deny true, map state 101 keys of 100",
		"  !! the map state does not fit the policy map (--bpf-policy-map-max 100)",
		"  => allowed",
		"",
		"Revision: 0",
		"Final verdict: ALLOWED",
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
