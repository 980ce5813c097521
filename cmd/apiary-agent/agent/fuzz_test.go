package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
)

// fuzzMethods are the methods the fuzz target picks from.
var fuzzMethods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodHead}

const fuzzPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: fuzz, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: db}}]
    toPorts: [{ports: [{port: "5432", protocol: TCP}]}]
`

// FuzzAPIRequest sends arbitrary requests to every endpoint of a whole
// agent, in-process: query parameters (list paging, prefixes, labels),
// path parameters and bodies (policy documents, trace requests). Every
// answer must be JSON, an error answer must say what is wrong, and no
// request may make a handler fail (500: a panic or an internal error).
func FuzzAPIRequest(f *testing.F) {
	_, flags := tempFlags(f)
	var srv api.Server
	celltest.StartWithFlags(f, flags, agent.Agent, celltest.Capture(&srv))
	handler := srv.Handler()

	seeds := []struct {
		method uint8
		target string
		body   string
	}{
		{0, "/v1/ipcache?limit=2", ""},
		{0, "/v1/ipcache?prefix=10.0.0.0/8&limit=1&continue=aXBjYWNoZToxMC4wLjAuMS8zMg", ""},
		{0, "/v1/ipcache?continue=aXBjYWNoZTpub3QtYS1wcmVmaXg", ""},
		{0, "/v1/ipcache/192.0.2.1", ""},
		{0, "/v1/identity?limit=3&continue=aWRlbnRpdHk6Mg", ""},
		{0, "/v1/identity/world", ""},
		{0, "/v1/node?limit=1", ""},
		{0, "/v1/kvstore?prefix=cilium/&limit=5", ""},
		{0, "/v1/kvstore/cilium/state/nodes/v1/default/n1", ""},
		{0, "/v1/policy?labels=k8s:app=web,app=db", ""},
		{1, "/v1/policy", fuzzPolicy},
		{1, "/v1/policy", `{"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy","metadata":{"name":"np"},"spec":{"podSelector":{}}}`},
		{2, "/v1/policy/trace", `{"source":["k8s:app=web"],"destination":["k8s:app=db"],"dport":"5432/TCP"}`},
		{2, "/v1/policy/trace", `{"source":["default/web"],"destination":["10.0.0.1"],"dport":"80"}`},
		{3, "/v1/policy?labels=k8s:io.cilium.k8s.policy.name=fuzz", ""},
		{3, "/v1/policy?all=true", ""},
		{0, "/v1/status", ""},
		{0, "/v1/endpoint?limit=1", ""},
		{0, "/v1/endpoint/1", ""},
		{1, "/v1/endpoint/1", `{"netns-path":"/proc/self/ns/net","interface-name":"eth0","labels":["app=web"]}`},
		{1, "/v1/endpoint/2", `{"netns-path":"/","labels":["app=web"],"ipv4":"10.0.0.5"}`},
		{3, "/v1/endpoint/1", ""},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, method uint8, target string, body []byte) {
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		if !strings.HasPrefix(target, "/") {
			target = "/v1/" + target
		}
		if _, err := url.ParseRequestURI(target); err != nil || strings.ContainsAny(target, " \t\r\n") {
			return // not a request line a client could send
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, m, "http://agent"+target, bytes.NewReader(body))
		if err != nil {
			return
		}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		checkFuzzAnswer(t, m, target, rec)
	})
}

// checkFuzzAnswer checks one answer of FuzzAPIRequest.
func checkFuzzAnswer(t *testing.T, method, target string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code == http.StatusInternalServerError {
		t.Fatalf("%s %s: 500 %s", method, target, rec.Body)
	}
	if method == http.MethodHead {
		return
	}
	if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("%s %s: %d with a body that is not JSON: %q", method, target, rec.Code, rec.Body)
	}
	if rec.Code >= 400 && !strings.HasPrefix(target, "/v1/healthz") { // a degraded healthz answers 503 with its document
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error == "" {
			t.Fatalf("%s %s: %d without an error message: %q", method, target, rec.Code, rec.Body)
		}
	}
}
