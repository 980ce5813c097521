package policyapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// The fuzz targets feed the parsers arbitrary input. Their seed corpora
// live in testdata/fuzz/<target> and run with every go test; explore
// with go test -fuzz=<target> ./policy/policyapi/.

// FuzzParseDocuments fuzzes whole inputs: YAML syntax, document
// splitting, Lists and every kind.
func FuzzParseDocuments(f *testing.F) {
	examples, _ := filepath.Glob("testdata/*.yaml")
	for _, ex := range examples {
		if data, err := os.ReadFile(ex); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkParse(t, data) })
}

// fuzzLimits are small, so that the fuzzer reaches them.
var fuzzLimits = policyapi.Limits{MaxDocumentSize: 4096, MaxInputSize: 1 << 20}

// FuzzDecodeYAML checks the bounded decoder against Kubernetes' decoding
// (sigs.k8s.io/yaml, then encoding/json): what it accepts decodes to the
// same values, and what it refuses for its size is refused in one line
// naming the limit.
func FuzzDecodeYAML(f *testing.F) {
	f.Add(aliasBomb(1000, 20))
	f.Add([]byte(nestedBomb))
	f.Add([]byte("a: &a {b: [1, 2.5, yes, ~, 0x1F]}\nc: {<<: *a, d: !!binary gIGC}\n"))
	examples, _ := filepath.Glob("testdata/*.yaml")
	for _, ex := range examples {
		if data, err := os.ReadFile(ex); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := policyapi.DecodeYAML(data, fuzzLimits)
		if errors.Is(err, policyapi.ErrTooLarge) {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, "--policy-max-document-size") {
				t.Fatalf("refusal %q is not one line naming the limit", msg)
			}
			return
		}
		if err != nil {
			return // malformed; the oracle may expand it past any limit
		}
		if len(bytes.TrimSpace(data)) == 0 {
			if got != nil {
				t.Fatalf("blank input decoded to %#v", got)
			}
			return // blank documents are skipped, where YAML may reject a tab
		}
		want, werr := sigsDecode(data)
		if werr != nil {
			t.Fatalf("decoded %#v where Kubernetes' decoding fails: %v", got, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v\nKubernetes' decoding: %#v", got, want)
		}
	})
}

// FuzzCiliumSpec fuzzes the spec of a CiliumNetworkPolicy, as JSON, to
// reach the rule decoder more often than whole documents do.
func FuzzCiliumSpec(f *testing.F) {
	f.Fuzz(func(t *testing.T, spec []byte) {
		checkParse(t, wrapSpec(`"cilium.io/v2","kind":"CiliumNetworkPolicy"`, spec))
	})
}

// FuzzNetworkPolicySpec fuzzes the spec of a NetworkPolicy, as JSON.
func FuzzNetworkPolicySpec(f *testing.F) {
	f.Fuzz(func(t *testing.T, spec []byte) {
		checkParse(t, wrapSpec(`"networking.k8s.io/v1","kind":"NetworkPolicy"`, spec))
	})
}

func wrapSpec(kind string, spec []byte) []byte {
	doc := []byte(`{"apiVersion":` + kind + `,"metadata":{"name":"fuzz","namespace":"ns"},"spec":`)
	return append(append(doc, spec...), '}')
}

// checkParse parses data and checks what must hold for any input: no
// panic; an error is a set of document errors and returns no policy; a
// result is deterministic, marshals, and keeps the model's invariants.
func checkParse(t *testing.T, data []byte) {
	ps, err := policyapi.ParseDocuments("fuzz.yaml", data, opts)
	if err != nil {
		checkParseError(t, ps, err)
		return
	}
	out, err := json.Marshal(ps)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	again, err := policyapi.ParseDocuments("fuzz.yaml", data, opts)
	if err != nil {
		t.Fatalf("second parse failed: %v", err)
	}
	if out2, _ := json.Marshal(again); !bytes.Equal(out, out2) {
		t.Fatalf("parsing is not deterministic:\n%s\n%s", out, out2)
	}
	for _, p := range ps {
		checkPolicy(t, p)
	}
}

func checkParseError(t *testing.T, ps []*policyapi.Policy, err error) {
	if ps != nil {
		t.Fatalf("policies returned with error %v", err)
	}
	var de *policyapi.DocumentError
	if !errors.As(err, &de) || len(de.Errs) == 0 || de.Document < 1 {
		t.Fatalf("error %v is not a document error with problems", err)
	}
	for _, fe := range de.Errs {
		if fe.Err == nil || fe.Err.Error() == "" {
			t.Fatalf("problem without a message in %v", err)
		}
	}
}

// probes are identities every peer is matched against.
var probes = []labels.Labels{
	identity.ReservedLabels(identity.ReservedHost),
	identity.ReservedLabels(identity.ReservedWorld),
	labels.MustParseList("k8s:app=web", "k8s:io.kubernetes.pod.namespace=ns", "k8s:io.cilium.k8s.policy.cluster=cluster1"),
	nil,
}

func checkPolicy(t *testing.T, p *policyapi.Policy) {
	if len(p.Rules) == 0 || !p.Labels.Has(labels.New(labels.SourceK8s, policyapi.LabelPolicyName, p.Name)) {
		t.Fatalf("policy %s has %d rules and labels %s", p, len(p.Rules), p.Labels)
	}
	for _, r := range p.Rules {
		if r.Subject.Kind != policyapi.SubjectEndpoints && r.Subject.Kind != policyapi.SubjectNodes {
			t.Fatalf("rule %s: subject kind %q", r.Field, r.Subject.Kind)
		}
		if p.Kind.IsNamespaced() && r.Subject.Selects(probes[2]) != r.Subject.Selector.Matches(probes[2]) {
			t.Fatalf("rule %s: Selects and Matches disagree", r.Field)
		}
		for _, entries := range [][]policyapi.PeerRule{r.Ingress, r.IngressDeny, r.Egress, r.EgressDeny} {
			for _, e := range entries {
				checkEntry(t, r, e)
			}
		}
	}
}

func checkEntry(t *testing.T, r *policyapi.Rule, e policyapi.PeerRule) {
	for _, peer := range e.Peers {
		if (peer.Selector == nil) == (peer.CIDR == nil) {
			t.Fatalf("rule %s %s: peer %+v needs exactly one of selector and CIDR", r.Field, e.Field, peer)
		}
		if peer.CIDR != nil {
			for _, ex := range peer.CIDR.Except {
				if !peer.CIDR.Prefix.Contains(ex.Addr()) || ex.Bits() <= peer.CIDR.Prefix.Bits() {
					t.Fatalf("rule %s %s: except %s outside %s", r.Field, e.Field, ex, peer.CIDR.Prefix)
				}
			}
		}
		for _, ls := range probes {
			peer.Matches(ls)
		}
	}
	for _, pp := range e.Ports {
		if pp.Name != "" && (pp.Port != 0 || pp.EndPort != 0) || pp.EndPort != 0 && pp.EndPort <= pp.Port {
			t.Fatalf("rule %s %s: bad port %+v", r.Field, e.Field, pp)
		}
	}
	if len(e.Ports) > 0 && len(e.ICMPs) > 0 {
		t.Fatalf("rule %s %s: ports and ICMPs together", r.Field, e.Field)
	}
}
