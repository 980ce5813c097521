package policyapi_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apiary-net/apiary/policy/policyapi"
)

// aliasBomb is a small document that expands to refs copies of a string
// of size bytes. The YAML decoder's alias check counts values, not bytes:
// 1 MiB and 999 aliases pass it and expand to a gigabyte of JSON.
func aliasBomb(size, refs int) []byte {
	var b strings.Builder
	b.WriteString(`a: &a "` + strings.Repeat("x", size) + "\"\nb:\n")
	for range refs {
		b.WriteString("- *a\n")
	}
	return []byte(b.String())
}

func TestAliasBombIsRefusedBeforeItExpands(t *testing.T) {
	bomb := aliasBomb(1<<20, 999)
	var (
		err           error
		before, after runtime.MemStats
	)
	runtime.ReadMemStats(&before)
	_, err = policyapi.ParseDocuments("bomb.yaml", bomb, policyapi.DefaultOptions())
	runtime.ReadMemStats(&after)
	want := "bomb.yaml: document 1: too large: decodes to more than the limit of 8388608 bytes (8 MiB) set by --policy-max-document-size (YAML aliases count each time they are used)"
	if !errors.Is(err, policyapi.ErrTooLarge) || err.Error() != want {
		t.Errorf("ParseDocuments(alias bomb) = %v\nwant %s", err, want)
	}
	// The input, its copy per document and the YAML tree: a few MiB.
	// Expanded, it was gigabytes.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("refusing the alias bomb allocated %d MiB, want under 64", alloc>>20)
	}
}

func TestInputLimit(t *testing.T) {
	o := policyapi.DefaultOptions()
	o.Limits = policyapi.Limits{MaxDocumentSize: 1000, MaxInputSize: 2500}
	doc := func(name string) string { // about 850 bytes decoded
		return "apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: " + name + "}\n" +
			"spec:\n  endpointSelector: {}\n  description: " + strings.Repeat("d", 700) + "\n"
	}
	t.Run("decoded", func(t *testing.T) {
		// 270 raw bytes decoding to 862: under the document limit, and
		// the third one passes the input limit.
		aliases := "x: &a " + strings.Repeat("x", 280) + "\ny: [*a, *a]\n---\n"
		in := aliases + aliases + aliases + doc("Bad_Name")
		_, err := policyapi.ParseDocuments("f.yaml", []byte(in), o)
		want := "f.yaml: document 3: too large: the documents up to this one decode to more than the limit of 2500 bytes set by --policy-max-input-size"
		if !errors.Is(err, policyapi.ErrTooLarge) || !strings.HasSuffix(err.Error(), "\n"+want) || strings.Contains(err.Error(), "Bad_Name") {
			t.Errorf("ParseDocuments = %v\nwant to end with %s, and nothing about later documents", err, want)
		}
	})
	t.Run("raw", func(t *testing.T) {
		in := doc("a") + "# " + strings.Repeat("c", 2500) + "\n"
		_, err := policyapi.ParseDocuments("f.yaml", []byte(in), o)
		want := fmt.Sprintf("parse f.yaml: too large: %d bytes, over the limit of 2500 bytes set by --policy-max-input-size", len(in))
		if !errors.Is(err, policyapi.ErrTooLarge) || err.Error() != want {
			t.Errorf("ParseDocuments = %v\nwant %s", err, want)
		}
	})
	t.Run("bad limits", func(t *testing.T) {
		o := policyapi.DefaultOptions()
		o.Limits.MaxDocumentSize = -1
		if _, err := policyapi.ParseDocuments("f.yaml", []byte(doc("a")), o); err == nil || !strings.Contains(err.Error(), "--policy-max-document-size: -1 is negative") {
			t.Errorf("ParseDocuments with a negative limit = %v", err)
		}
	})
}

// bigPolicy is a generated CiliumNetworkPolicy of the kind tools write:
// rules ingress rules of 5 selectors and 5 ports each, and cidrs egress
// CIDRs.
func bigPolicy(rules, cidrs int) []byte {
	var b strings.Builder
	b.WriteString("apiVersion: cilium.io/v2\nkind: CiliumNetworkPolicy\nmetadata: {name: generated, namespace: prod}\nspec:\n")
	b.WriteString("  endpointSelector: {matchLabels: {app: gateway}}\n  ingress:\n")
	for i := range rules {
		b.WriteString("  - fromEndpoints:\n")
		for j := range 5 {
			fmt.Fprintf(&b, "    - matchLabels: {app: client-%d-%d, io.kubernetes.pod.namespace: team-%d}\n", i, j, i%50)
		}
		b.WriteString("    toPorts:\n    - ports:\n")
		for j := range 5 {
			fmt.Fprintf(&b, "      - {port: \"%d\", protocol: TCP}\n", 8000+j)
		}
	}
	b.WriteString("  egress:\n  - toCIDRSet:\n")
	for i := range cidrs {
		fmt.Fprintf(&b, "    - cidr: 10.%d.%d.0/24\n", i/256%256, i%256)
	}
	return []byte(b.String())
}

// Real policies pass the default limits: Cilium's examples and a
// generated policy larger than Kubernetes stores (about 1.5 MiB).
func TestDefaultLimitsAcceptRealPolicies(t *testing.T) {
	examples, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := policyapi.ParseDocuments(ex, data, policyapi.DefaultOptions()); err != nil {
			t.Errorf("%s: %v", ex, err)
		}
	}
	big := bigPolicy(3000, 30000)
	if len(big) < 2<<20 {
		t.Fatalf("generated policy of %d bytes, want over 2 MiB", len(big))
	}
	pols, err := policyapi.ParseDocuments("generated.yaml", big, policyapi.DefaultOptions())
	if err != nil || len(pols) != 1 || len(pols[0].Rules[0].Ingress) != 3000 {
		t.Fatalf("ParseDocuments(%d bytes) = %v", len(big), err)
	}
}

// countingContext is cancelled from its nth Err call on, so that a test
// can say where a parse looks at it.
type countingContext struct {
	context.Context
	calls, n atomic.Int64
}

func (c *countingContext) Err() error {
	if c.calls.Add(1) >= c.n.Load() {
		return context.Canceled
	}
	return nil
}

func TestParseStopsWhenCancelled(t *testing.T) {
	t.Run("between documents", func(t *testing.T) {
		ctx := &countingContext{Context: context.Background()}
		ctx.n.Store(3)
		in := strings.Repeat(named("a")+"---\n", 1000)
		_, err := policyapi.ParseDocumentsContext(ctx, "f.yaml", []byte(in), policyapi.DefaultOptions())
		if !errors.Is(err, context.Canceled) || err.Error() != "parse f.yaml: context canceled" {
			t.Fatalf("ParseDocumentsContext = %v, want context canceled", err)
		}
		if calls := ctx.calls.Load(); calls > 4 {
			t.Errorf("the parse looked at its context %d times after the cancellation; want it to stop", calls-3)
		}
	})
	t.Run("within a large document", func(t *testing.T) {
		ctx := &countingContext{Context: context.Background()}
		ctx.n.Store(2) // the first check is before the document
		_, err := policyapi.ParseDocumentsContext(ctx, "f.yaml", bigPolicy(1000, 1000), policyapi.DefaultOptions())
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ParseDocumentsContext = %v, want context canceled", err)
		}
		// The error path looks again to tell a cancellation from a bad
		// document: two more calls, no more work.
		if calls := ctx.calls.Load(); calls > 4 {
			t.Errorf("the parse looked at its context %d times after the cancellation; want it to stop", calls-2)
		}
	})
	t.Run("done before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := policyapi.ParseDocumentsContext(ctx, "f.yaml", []byte(named("a")), policyapi.DefaultOptions()); !errors.Is(err, context.Canceled) {
			t.Errorf("ParseDocumentsContext = %v, want context canceled", err)
		}
	})
}
