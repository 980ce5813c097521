package policycell_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// restartable is a policy agent with a state dir that a test stops and
// starts again with the same state dir.
type restartable struct {
	t        *testing.T
	stateDir string
	h        *hive.Hive
	client   *client.Client
}

func newRestartable(t *testing.T) *restartable {
	r := &restartable{t: t, stateDir: filepath.Join(t.TempDir(), "state")}
	r.start()
	t.Cleanup(r.stop)
	return r
}

// start starts a fresh agent on the state dir.
func (r *restartable) start() {
	r.t.Helper()
	socket := filepath.Join(r.t.TempDir(), "apiary.sock")
	r.h = celltest.New(r.t, []string{"socket-path=" + socket, "state-dir=" + r.stateDir},
		api.Cell, status.Cell, statedir.Cell, kvstorecell.Cell, localnode.Cell, identitycell.Cell, policycell.Cell)
	if err := r.h.Start(context.Background()); err != nil {
		r.t.Fatalf("start: %v", err)
	}
	r.client = client.New(socket)
}

// stop stops the agent (once).
func (r *restartable) stop() {
	r.t.Helper()
	if r.h == nil {
		return
	}
	r.client.Close()
	if err := r.h.Stop(context.Background()); err != nil {
		r.t.Errorf("stop: %v", err)
	}
	r.h = nil
}

func (r *restartable) restart() {
	r.t.Helper()
	r.stop()
	r.start()
}

// rules returns the rules in force as JSON, in order.
func (r *restartable) rules() []string {
	r.t.Helper()
	got, err := r.client.PolicyGet(context.Background(), nil)
	if err != nil {
		r.t.Fatalf("PolicyGet = %v", err)
	}
	out := make([]string, len(got.Rules))
	for i, raw := range got.Rules {
		out[i] = string(raw)
	}
	return out
}

func (r *restartable) put(doc string) {
	r.t.Helper()
	if _, err := r.client.PolicyPut(context.Background(), []byte(doc)); err != nil {
		r.t.Fatalf("PolicyPut = %v", err)
	}
}

func (r *restartable) policyLine() models.StatusEntry {
	r.t.Helper()
	st, err := r.client.Status(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range st.Entries {
		if e.Name == "Policy" {
			return e
		}
	}
	r.t.Fatal("no Policy status line")
	return models.StatusEntry{}
}

func (r *restartable) apiFile() string { return filepath.Join(r.stateDir, "policy", "api.json") }

const (
	denyPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: deny-web, namespace: prod}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingressDeny:
  - fromEntities: [world]
`
	twoSpecs = `apiVersion: cilium.io/v2
kind: CiliumClusterwideNetworkPolicy
metadata: {name: two-specs}
specs:
- endpointSelector: {matchLabels: {app: a}}
  labels: [{key: part, value: one}]
  ingress: [{fromEntities: [cluster]}]
- endpointSelector: {matchLabels: {app: b}}
  labels: [{key: part, value: two}]
  ingress: [{fromEntities: [cluster]}]
`
	cidrPolicyV2 = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: to-dns
spec:
  endpointSelector: {matchLabels: {app: web}}
  egress:
  - toCIDR: [10.2.0.0/16]
`
)

// TestAPIPoliciesSurviveRestart: what was imported, replaced and deleted
// through the API is what is in force after a restart, in the same
// order.
func TestAPIPoliciesSurviveRestart(t *testing.T) {
	a := newRestartable(t)
	ctx := context.Background()
	a.put(string(readFile(t, "../testdata/l4-policy.yaml")) + "\n---\n" + cidrPolicy)
	a.put(denyPolicy + "---\n" + twoSpecs)
	a.put(cidrPolicyV2) // replaces to-dns of the first import
	want := a.rules()
	if len(want) != 5 {
		t.Fatalf("rules before the restart = %d, want 5: %s", len(want), want)
	}
	if !strings.Contains(want[4], "10.2.0.0/16") {
		t.Fatalf("last rule = %s, want the replaced to-dns", want[4])
	}

	a.restart()
	if got := a.rules(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rules after a restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := a.policyLine(); got.State != status.Ok {
		t.Errorf("Policy line after a restart = %s %q, want Ok", got.State, got.Message)
	}

	t.Run("delete by a rule's label", func(t *testing.T) {
		if _, err := a.client.PolicyDelete(ctx, []string{"unspec:part=one"}); err != nil {
			t.Fatal(err)
		}
		want := a.rules()
		if len(want) != 4 {
			t.Fatalf("rules after the delete = %d, want 4", len(want))
		}
		a.restart()
		if got := a.rules(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("rules after a restart:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("delete by policy name", func(t *testing.T) {
		rev, err := a.client.PolicyDelete(ctx, []string{"io.cilium.k8s.policy.name=deny-web"})
		if err != nil || rev.Deleted == nil || *rev.Deleted != 1 {
			t.Fatalf("PolicyDelete = %+v, %v; want 1 rule deleted", rev, err)
		}
		a.restart()
		for _, r := range a.rules() {
			if strings.Contains(r, "deny-web") {
				t.Fatalf("deny-web is back after a restart: %s", r)
			}
		}
	})
	t.Run("delete all", func(t *testing.T) {
		if _, err := a.client.PolicyDelete(ctx, nil); err != nil {
			t.Fatal(err)
		}
		a.restart()
		if got := a.rules(); len(got) != 0 {
			t.Fatalf("rules after delete all and a restart = %s, want none", got)
		}
		if data := string(readFile(t, a.apiFile())); !strings.Contains(data, `"imports": []`) {
			t.Errorf("api.json after delete all = %s, want no imports", data)
		}
	})
}

// TestAPIPoliciesCorruptFile: a file that does not decode is moved
// aside, the agent starts without it, and the status says so.
func TestAPIPoliciesCorruptFile(t *testing.T) {
	a := newRestartable(t)
	a.put(denyPolicy)
	a.stop()
	if err := os.WriteFile(a.apiFile(), []byte(`{"version": 1, "imports": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	a.start()
	if got := a.rules(); len(got) != 0 {
		t.Errorf("rules = %s, want none", got)
	}
	aside, _ := filepath.Glob(a.apiFile() + ".corrupt-*")
	if len(aside) != 1 || string(readFile(t, aside[0])) != `{"version": 1, "imports": [` {
		t.Errorf("files set aside = %v, want one .corrupt-<time> holding the old content", aside)
	}
	line := a.policyLine()
	if line.State != status.Warning || !strings.Contains(line.Message, "1 problems restoring API-imported policies") ||
		!strings.Contains(strings.Join(line.Details, "\n"), "API-imported policies file corrupt") {
		t.Errorf("Policy line = %s %q %q, want a Warning saying the file was corrupt", line.State, line.Message, line.Details)
	}
	a.put(denyPolicy) // the file works again
	a.restart()
	if got := a.rules(); len(got) != 1 {
		t.Errorf("rules after a new import and a restart = %d, want 1", len(got))
	}
}

// TestAPIPoliciesNoLongerParse: an import the current parser refuses is
// left out with an error naming the policy and the field; the rest
// loads, the status is a Warning and the file as it was is kept.
func TestAPIPoliciesNoLongerParse(t *testing.T) {
	a := newRestartable(t)
	a.put(denyPolicy)
	a.put(twoSpecs)
	a.stop()
	data := string(readFile(t, a.apiFile()))
	// As if an older agent had accepted a field this one refuses.
	broken := strings.Replace(data, `fromEntities: [world]`, `fromEntities: [world]\n    bogusField: 1`, 1)
	if broken == data {
		t.Fatalf("api.json does not hold the document as imported: %s", data)
	}
	if err := os.WriteFile(a.apiFile(), []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	a.start()
	got := a.rules()
	if len(got) != 2 || !strings.Contains(got[0], "two-specs") {
		t.Errorf("rules = %s, want the two of two-specs", got)
	}
	line := a.policyLine()
	details := strings.Join(line.Details, "\n")
	if line.State != status.Warning || !strings.Contains(details, "import 1") ||
		!strings.Contains(details, "io.cilium.k8s.policy.name=deny-web") || !strings.Contains(details, "bogusField") {
		t.Errorf("Policy line = %s %q\n%s\nwant a Warning naming deny-web and bogusField", line.State, line.Message, details)
	}
	aside, _ := filepath.Glob(a.apiFile() + ".rejected-*")
	if len(aside) != 1 || string(readFile(t, aside[0])) != broken {
		t.Errorf("files set aside = %v, want one .rejected-<time> holding the file as it was", aside)
	}
	a.restart() // the file now holds what loaded: no warning
	if got := a.rules(); len(got) != 2 {
		t.Errorf("rules after another restart = %d, want 2", len(got))
	}
	if line := a.policyLine(); line.State != status.Ok {
		t.Errorf("Policy line after another restart = %s %q, want Ok", line.State, line.Message)
	}
}

// TestAPIImportRefusedWhenNotKept: when the state dir cannot keep an
// import, the import fails and the repository does not change.
func TestAPIImportRefusedWhenNotKept(t *testing.T) {
	a := newRestartable(t)
	if err := os.WriteFile(filepath.Join(a.stateDir, "policy"), nil, 0o600); err != nil {
		t.Fatal(err) // a file where the policy dir should be
	}
	_, err := a.client.PolicyPut(context.Background(), []byte(denyPolicy))
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusInternalServerError ||
		!strings.Contains(apiErr.Message, "keep API-imported policies") {
		t.Fatalf("PolicyPut = %v, want a 500 saying the policies could not be kept", err)
	}
	if got := a.rules(); len(got) != 0 {
		t.Errorf("rules = %s, want none: a refused import changes nothing", got)
	}
}
