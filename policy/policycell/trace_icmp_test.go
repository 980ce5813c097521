package policycell_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/simulate"
)

// TestTraceAgreesWithSimulateOnICMP imports the policies of the icmp
// scenario into an agent and traces each of its queries between two
// endpoints (ICMP and ICMPv6 by type number, in the port's place of
// --dport): the verdicts are simulate's, from the rules before the
// endpoints have identities and from the map states after.
func TestTraceAgreesWithSimulateOnICMP(t *testing.T) {
	const file = "../testdata/scenarios/icmp.yaml"
	data := readFile(t, file)
	sim, err := simulate.Load(file, data)
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		Endpoints []simulate.Endpoint `yaml:"endpoints"`
		Policies  []yaml.Node         `yaml:"policies"`
	}
	if err := yaml.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, p := range sc.Policies {
		b, err := yaml.Marshal(&p)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(b))
	}
	a := startPolicyAgent(t)
	ctx := context.Background()
	if _, err := a.client.PolicyPut(ctx, []byte(strings.Join(docs, "---\n"))); err != nil {
		t.Fatal(err)
	}
	sides := map[string][]string{} // "ns/name" -> trace labels
	for _, ep := range sc.Endpoints {
		ls := []string{"ns:" + ep.Namespace}
		for k, v := range ep.Labels {
			ls = append(ls, k+"="+v)
		}
		sides[ep.Namespace+"/"+ep.Name] = ls
	}
	results := sim.Run()
	run := func(t *testing.T, from string) {
		traced := 0
		for _, r := range results {
			src, dst := sides[r.From], sides[r.To]
			if src == nil || dst == nil || r.ICMPType == nil {
				continue // addresses need the ipcache; TCP is traced elsewhere
			}
			traced++
			dport := fmt.Sprintf("%d/%s", r.Port, r.Protocol)
			got, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: src, Destination: dst, DPort: dport})
			if err != nil {
				t.Fatalf("trace %s: %v", r, err)
			}
			if got.Allowed != (r.Verdict == simulate.Allowed) || got.DPort != dport {
				t.Errorf("trace %s -> %s %s: allowed %v (dport %s), simulate says %s", r.From, r.To, dport, got.Allowed, got.DPort, r.Verdict)
			}
			for _, d := range []models.PolicyTraceDirection{got.Egress, got.Ingress} {
				if d.VerdictFrom != from && d.VerdictFrom != models.VerdictFromNeighbourDiscovery {
					t.Errorf("trace %s: verdict from %q, want %q", r, d.VerdictFrom, from)
				}
			}
		}
		if traced < 10 {
			t.Fatalf("%d ICMP queries between endpoints traced, want the scenario's (at least 10)", traced)
		}
	}
	t.Run("from the rules", func(t *testing.T) { run(t, models.VerdictFromRules) })
	for _, ls := range sides {
		full := []string{"k8s:io.cilium.k8s.policy.cluster=default", "k8s:io.kubernetes.pod.namespace=" + strings.TrimPrefix(ls[0], "ns:")}
		for _, l := range ls[1:] {
			full = append(full, "k8s:"+l)
		}
		if _, _, err := a.alloc.AllocateIdentity(ctx, labels.MustParseList(full...)); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("from the map states", func(t *testing.T) { run(t, models.VerdictFromMapState) })

	t.Run("names and errors", func(t *testing.T) {
		cl, web := sides["x/client"], sides["x/web"]
		got, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: cl, Destination: web, DPort: "EchoRequest/icmpv6"})
		if err != nil || got.DPort != "128/ICMPv6" || !got.Allowed {
			t.Errorf("trace EchoRequest/icmpv6 = %+v, %v; want 128/ICMPv6 allowed", got, err)
		}
		for dport, want := range map[string]string{
			"Echo/ICMPv6": `"Echo" is neither a number in 0..255 nor an IPv6 ICMP type name`,
			"256/ICMP":    `"256" is neither a number`,
			"8/GRE":       "protocol must be TCP, UDP, SCTP, ICMP or ICMPv6",
		} {
			_, err := a.client.PolicyTrace(ctx, models.PolicyTraceRequest{Source: cl, Destination: web, DPort: dport})
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, want) {
				t.Errorf("trace with dport %s = %v; want 400 saying %q", dport, err, want)
			}
		}
	})
}
