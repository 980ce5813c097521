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
		DestinationIdentity: 301,
		Egress:              models.PolicyTraceDirection{Allowed: true, MapStateKeys: 100, VerdictFrom: models.VerdictFromMapState},
		Ingress:             models.PolicyTraceDirection{Allowed: true, MapStateKeys: 101, DefaultDeny: true, VerdictFrom: models.VerdictFromMapState},
	}
	var out bytes.Buffer
	printTrace(&out, tr)
	want := []string{
		"Source:      cluster1/x/a (10.0.0.1), identity 300",
		"Destination: identity 301",
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

// TestPrintTraceWithoutDatapath checks that a trace from an agent
// without a datapath (no policy map size) prints the map state's size
// and never calls it too large.
func TestPrintTraceWithoutDatapath(t *testing.T) {
	tr := &models.PolicyTrace{
		Source: []string{"k8s:app=a"}, Destination: []string{"k8s:app=b"}, DPort: "80/TCP", Allowed: true,
		SourceIdentity: 300, DestinationIdentity: 301,
		Egress:  models.PolicyTraceDirection{Allowed: true, MapStateKeys: 2, VerdictFrom: models.VerdictFromMapState},
		Ingress: models.PolicyTraceDirection{Allowed: true, MapStateKeys: 3, VerdictFrom: models.VerdictFromMapState},
	}
	var out bytes.Buffer
	printTrace(&out, tr)
	got := out.String()
	for _, want := range []string{"map state 2 keys\n", "map state 3 keys\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "does not fit") {
		t.Errorf("output calls a map state too large without a map size:\n%s", got)
	}
}

// TestPrintTraceWithoutIdentity checks a trace of label sets no identity
// has: decided from the rules, no map state.
func TestPrintTraceWithoutIdentity(t *testing.T) {
	tr := &models.PolicyTrace{
		Source: []string{"k8s:app=a"}, Destination: []string{"k8s:app=b"}, DPort: "80/TCP", PolicyMapMax: 100, Revision: 3,
		Egress:  models.PolicyTraceDirection{Allowed: true, VerdictFrom: models.VerdictFromRules},
		Ingress: models.PolicyTraceDirection{DefaultDeny: true, VerdictFrom: models.VerdictFromRules},
	}
	var out bytes.Buffer
	printTrace(&out, tr)
	want := []string{
		"Source:      no identity has these labels",
		"Destination: no identity has these labels",
		"Tracing From: [k8s:app=a] => To: [k8s:app=b] Ports: [80/TCP]",
		"",
		"Egress of the source: 0 rules considered, default deny false, verdict from the rules",
		"  => allowed",
		"",
		"Ingress of the destination: 0 rules considered, default deny true, verdict from the rules",
		"  => denied",
		"",
		"Revision: 3",
		"Final verdict: DENIED",
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// TestPrintTraceNeighbourDiscovery checks that an ICMPv6 neighbour
// discovery trace says the datapath never polices it.
func TestPrintTraceNeighbourDiscovery(t *testing.T) {
	nd := models.PolicyTraceDirection{Allowed: true, VerdictFrom: models.VerdictFromNeighbourDiscovery}
	tr := &models.PolicyTrace{
		Source: []string{"k8s:app=a"}, Destination: []string{"k8s:app=b"}, DPort: "135/ICMPv6", PolicyMapMax: 100, Allowed: true,
		Egress: nd, Ingress: nd,
	}
	var out bytes.Buffer
	printTrace(&out, tr)
	for _, want := range []string{
		"Tracing From: [k8s:app=a] => To: [k8s:app=b] Ports: [135/ICMPv6]",
		"Egress of the source: 0 rules considered, default deny false, neighbour discovery, never policed\n  => allowed",
		"Ingress of the destination: 0 rules considered, default deny false, neighbour discovery, never policed\n  => allowed",
		"Final verdict: ALLOWED",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("got:\n%s\nwant it to contain:\n%s", out.String(), want)
		}
	}
}
