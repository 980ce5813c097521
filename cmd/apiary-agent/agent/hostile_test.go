package agent_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
)

// aliasBomb is a document of one anchored string of size bytes and refs
// aliases to it: small, and a gigabyte once expanded.
func aliasBomb(size, refs int) []byte {
	return []byte(`a: &a "` + strings.Repeat("x", size) + "\"\nb:\n" + strings.Repeat("- *a\n", refs))
}

const goodPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: good}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress: [{fromEndpoints: [{matchLabels: {app: client}}]}]
`

// startWithin starts h, failing the test if the start takes more than a
// minute (a file that blocks the --policy-dir scan kept it forever).
func startWithin(t *testing.T, h *hive.Hive) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- h.Start(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("start: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the agent did not start within a minute")
	}
}

// TestHostilePolicyInput feeds the agent hostile policy: a 4 MiB alias bomb,
// a named pipe and a symlink to /dev/zero in --policy-dir crashed it at
// every start or kept it from starting; a 1 MiB alias bomb through
// `apiary policy import` took 5 GB and crashed it.
func TestHostilePolicyInput(t *testing.T) {
	socket, flags := tempFlags(t)
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "good.yaml"), []byte(goodPolicy), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "bomb.yaml"), aliasBomb(4<<20, 999), 0o644))
	must(t, syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644))
	must(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml")))

	h := celltest.New(t, append(flags, "policy-dir="+dir), agent.Agent)
	startWithin(t, h)
	stopped := false
	defer func() {
		if !stopped {
			_ = h.Stop(context.Background())
		}
	}()
	c := client.New(socket)
	defer c.Close()
	ctx := t.Context()

	line := policyLine(t, c)
	for _, want := range []string{"1 rules", "rejected: bomb.yaml", "skipped: fifo.yaml, zero.yaml"} {
		if line.State != models.StateWarning || !strings.Contains(line.Message, want) {
			t.Errorf("Policy line = %s %q, want a Warning with %q", line.State, line.Message, want)
		}
	}

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.PolicyPut(ctx, aliasBomb(1<<20, 999))
	runtime.ReadMemStats(&after)
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(apiErr.Message, "--policy-max-document-size") {
		t.Errorf("import of the alias bomb = %v, want 413 naming --policy-max-document-size", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
		t.Errorf("refusing the alias bomb allocated %d MiB, want under 256", alloc>>20)
	}
	if st, err := c.Status(ctx); err != nil || len(st.Entries) == 0 {
		t.Errorf("status after the bomb = %v, %v", st, err)
	}

	stopCtx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stopped = true
	if err := h.Stop(stopCtx); err != nil {
		t.Errorf("stop: %v", err)
	}
}

func policyLine(t *testing.T, c *client.Client) models.StatusEntry {
	t.Helper()
	st, err := c.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range st.Entries {
		if e.Name == "Policy" {
			return e
		}
	}
	t.Fatalf("no Policy line in %+v", st.Entries)
	return models.StatusEntry{}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
