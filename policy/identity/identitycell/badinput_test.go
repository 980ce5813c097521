package identitycell_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
)

// badEntries are identity keys this cluster's agents must not use.
var badEntries = map[string]string{
	layout.IdentitiesPrefix + "/id/300":   `{"labels":["k8s:app=web"]}`,
	layout.IdentitiesPrefix + "/id/301":   "",
	layout.IdentitiesPrefix + "/id/abc":   "k8s:app=x;",
	layout.IdentitiesPrefix + "/id/70000": "k8s:app=c1;k8s:io.cilium.k8s.policy.cluster=c1;",
	layout.IdentitiesPrefix + "/id/302":   "k8s:app=x;k8s:io.cilium.k8s.policy.cluster=other;",
}

// TestBadKVStoreEntries: malformed entries are skipped, logged with
// their key and counted; entries of another cluster's range or naming
// another cluster are refused and reported; the rest syncs.
func TestBadKVStoreEntries(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	raw := srv.Client()
	ctx := ctxFor(t)
	for k, v := range badEntries {
		_, err := raw.Put(ctx, k, v)
		must(t, err)
	}
	_, err := raw.Put(ctx, layout.IdentitiesPrefix+"/id/303", "k8s:app=good;k8s:io.cilium.k8s.policy.cluster=default;")
	must(t, err)
	var reg metrics.Registry
	a := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.1",
		extra: []cell.Cell{metrics.Cell, store.Cell, celltest.Capture(&reg)}})

	var globals []identity.NumericIdentity
	for _, id := range a.alloc.GetIdentities() {
		if id.ID.Scope() == identity.ScopeGlobal && !id.ID.IsReserved() {
			globals = append(globals, id.ID)
		}
	}
	if !slices.Equal(globals, []identity.NumericIdentity{303}) {
		t.Errorf("global identities = %v, want only 303", globals)
	}
	line := statusLine(t, a.client, func(e models.StatusEntry) bool { return strings.HasPrefix(e.Message, "1 global") })
	if line.State != status.Warning || line.Message != "1 global, 0 local, kvstore, 5 kvstore entries skipped" {
		t.Errorf("Identities line = %s %q", line.State, line.Message)
	}
	details := strings.Join(line.Details, "\n")
	for _, want := range []string{
		"skipped cilium/state/identities/v1/id/300: malformed identity",
		"skipped cilium/state/identities/v1/id/301: id 301: empty value",
		`skipped cilium/state/identities/v1/id/abc: master key name "abc" is not a decimal id`,
		"skipped cilium/state/identities/v1/id/70000: refused identity: id 70000 is outside the range 256..65535",
		`skipped cilium/state/identities/v1/id/302: refused identity: id 302 has the labels of cluster "other"`,
	} {
		if !strings.Contains(details, want) {
			t.Errorf("details lack %q:\n%s", want, details)
		}
	}
	counts := skippedCounts(t, reg)
	if counts["malformed"] != 3 || counts["refused"] != 2 {
		t.Errorf("skipped entries counted %v, want 3 malformed and 2 refused", counts)
	}
	// The KVStore line may still be catching up with the connection:
	// wait for the health itself; skipped entries would keep it degraded.
	var h *models.Healthz
	celltest.Eventually(t, "healthz ok despite the skipped entries", func() bool {
		var err error
		h, err = a.client.Healthz(ctx)
		return err == nil && h.Status == models.HealthzOK
	})
	// Allocation still works and avoids the ids the bad entries occupy.
	id, _, err := a.alloc.AllocateIdentity(ctx, pod("web"))
	if err != nil || id.ID == 300 || id.ID == 301 || id.ID == 302 || id.ID == 303 {
		t.Errorf("allocation = %v, %v", id, err)
	}
	// Once the bad entries are gone, the line is Ok again.
	for k := range badEntries {
		_, err := raw.Delete(ctx, k)
		must(t, err)
	}
	statusLine(t, a.client, func(e models.StatusEntry) bool { return e.State == status.Ok })
}

// skippedCounts reads the watch store's skipped entries of the
// identities, by reason.
func skippedCounts(t *testing.T, reg metrics.Registry) map[string]float64 {
	t.Helper()
	families, err := reg.Gather()
	must(t, err)
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "apiary_kvstore_store_skipped_values_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["scope"] == "identities" {
				out[labels["reason"]] = m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// TestOneBadIdentityKeyKeepsTheAgentHealthy checks hostile kvstore input: a
// bad identity key written by anyone while the agent runs is skipped,
// counted and a Warning; /v1/healthz stays 200 and the overall status is
// no Failure.
func TestOneBadIdentityKeyKeepsTheAgentHealthy(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	var reg metrics.Registry
	a := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.1",
		extra: []cell.Cell{metrics.Cell, store.Cell, celltest.Capture(&reg)}})
	ctx := ctxFor(t)
	statusLine(t, a.client, func(e models.StatusEntry) bool { return e.State == status.Ok })
	_, err := srv.Client().Put(ctx, layout.IdentitiesPrefix+"/id/abc", "k8s:a=b;")
	must(t, err)
	line := statusLine(t, a.client, func(e models.StatusEntry) bool { return e.State == status.Warning })
	if !strings.HasSuffix(line.Message, "1 kvstore entries skipped") ||
		!slices.Contains(line.Details, `skipped cilium/state/identities/v1/id/abc: master key name "abc" is not a decimal id`) {
		t.Errorf("Identities line = %q %q", line.Message, line.Details)
	}
	if counts := skippedCounts(t, reg); counts["malformed"] != 1 {
		t.Errorf("skipped entries counted %v, want 1 malformed", counts)
	}
	h, err := a.client.Healthz(ctx)
	if err != nil || h.Status != models.HealthzOK || len(h.Degraded) != 0 {
		t.Errorf("healthz = %+v, %v; want ok", h, err)
	}
	st, err := a.client.Status(ctx)
	must(t, err)
	if st.State == status.Failure {
		t.Errorf("overall status = %s with one bad identity key: %+v", st.State, st.Entries)
	}
}

func TestAPI(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	a := startAgent(t, agentConfig{srv: srv, ip: "10.0.0.1"})
	web, _, err := a.alloc.AllocateIdentity(ctxFor(t), pod("web"))
	must(t, err)
	cidr, _, err := a.alloc.AllocateIdentity(ctxFor(t), identity.CIDRLabels(mustPrefix("10.0.0.0/30")))
	must(t, err)
	list, err := a.client.IdentityList(context.Background())
	must(t, err)
	var ids []uint32
	for _, id := range list {
		ids = append(ids, id.ID)
	}
	want := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, uint32(web.ID), uint32(cidr.ID)}
	if !slices.Equal(ids, want) {
		t.Errorf("GET /v1/identity ids = %v, want %v", ids, want)
	}
	got, err := a.client.IdentityGet(context.Background(), web.ID.String())
	must(t, err)
	if got.Scope != "global" || strings.Join(got.Labels, ",") != "k8s:app=web,k8s:io.cilium.k8s.policy.cluster=default,k8s:io.kubernetes.pod.namespace=default" {
		t.Errorf("GET /v1/identity/%d = %+v", web.ID, got)
	}
	if got, err := a.client.IdentityGet(context.Background(), "world"); err != nil || got.ID != 2 || got.Scope != "reserved" {
		t.Errorf("GET /v1/identity/world = %+v, %v", got, err)
	}
	for _, tc := range []struct {
		give string
		code int
		msg  string
	}{
		{"99999", http.StatusNotFound, "identity 99999 not found"},
		{"web", http.StatusBadRequest, `identity "web" is neither a number nor a reserved name`},
	} {
		var apiErr *client.APIError
		_, err := a.client.IdentityGet(context.Background(), tc.give)
		if !errors.As(err, &apiErr) || apiErr.StatusCode != tc.code || apiErr.Message != tc.msg {
			t.Errorf("GET /v1/identity/%s = %v, want %d %q", tc.give, err, tc.code, tc.msg)
		}
	}
}
