package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
)

func echoName(w http.ResponseWriter, r *http.Request) {
	api.WriteJSON(w, http.StatusOK, map[string]string{"name": r.PathValue("name")})
}

func otherEcho(w http.ResponseWriter, r *http.Request) { echoName(w, r) }

func TestRegisteredHandler(t *testing.T) {
	path := startAPI(t, cell.Provide(func() api.HandlerOut {
		return api.NewHandlerOut(http.MethodGet, "/v1/echo/{name}", echoName)
	}))
	var got map[string]string
	if _, err := client.New(path).Get(t.Context(), "/v1/echo/bee", &got); err != nil {
		t.Fatal(err)
	}
	if got["name"] != "bee" {
		t.Errorf("echo = %v, want name=bee", got)
	}
	if r := do(t, path, http.MethodDelete, "/v1/echo/bee"); r.code != http.StatusMethodNotAllowed {
		t.Errorf("DELETE = %d, want 405", r.code)
	}
}

func TestHandlerRegistrationErrors(t *testing.T) {
	provide := func(method, p string, fn http.HandlerFunc) cell.Cell {
		return cell.Provide(func() api.HandlerOut { return api.NewHandlerOut(method, p, fn) })
	}
	tests := []struct {
		name  string
		give  []cell.Cell
		wants []string
	}{
		{
			name:  "duplicate",
			give:  []cell.Cell{provide("GET", "/v1/echo/{name}", echoName), provide("GET", "/v1/echo/{name}", otherEcho)},
			wants: []string{`"GET /v1/echo/{name}": registered twice`, "api_test.echoName", "api_test.otherEcho"},
		},
		{
			name:  "built-in taken",
			give:  []cell.Cell{provide("GET", "/v1/healthz", echoName)},
			wants: []string{`"GET /v1/healthz": registered twice`, "api.(*builtins).healthz", "api_test.echoName"},
		},
		{
			name:  "conflicting wildcards",
			give:  []cell.Cell{provide("GET", "/v1/echo/{name}", echoName), provide("GET", "/v1/echo/{id}", otherEcho)},
			wants: []string{"conflicts with pattern"},
		},
		{
			name:  "lower-case method",
			give:  []cell.Cell{provide("get", "/v1/x", echoName)},
			wants: []string{`method "get" is not an upper-case HTTP method`},
		},
		{
			name:  "relative path",
			give:  []cell.Cell{provide("GET", "v1/x", echoName)},
			wants: []string{`path "v1/x" does not start with /`},
		},
		{
			name:  "nil handler",
			give:  []cell.Cell{provide("GET", "/v1/x", nil)},
			wants: []string{"handler is nil"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newHive(t, socketPath(t), tt.give...).Populate()
			if err == nil {
				t.Fatal("Populate succeeded, want an error")
			}
			for _, want := range tt.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// degrader reports a degraded health scope at start.
func degrader(lc cell.Lifecycle, h cell.Health) {
	lc.Append(cell.Hook{OnStart: func(cell.HookContext) error {
		h.NewScope("sync").Degraded("cannot sync", errNoPeer)
		return nil
	}})
}

var errNoPeer = &peerError{}

type peerError struct{}

func (*peerError) Error() string { return "no peer" }

func TestHealthzDegraded(t *testing.T) {
	path := startAPI(t, cell.Module("broken", "A module that degrades", cell.Invoke(degrader)))
	c := client.New(path)
	hz, err := c.Healthz(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if hz.Status != models.HealthzDegraded || len(hz.Degraded) != 1 || hz.Degraded[0] != "broken.sync" {
		t.Errorf("Healthz = %+v, want degraded [broken.sync]", hz)
	}
	if r := do(t, path, http.MethodGet, "/v1/healthz"); r.code != http.StatusServiceUnavailable {
		t.Errorf("GET /v1/healthz = %d, want 503", r.code)
	}
	h, err := c.Hive(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.Level != models.LevelDegraded {
		t.Errorf("hive level = %s, want Degraded", h.Level)
	}
	var broken *models.Module
	for _, m := range h.Modules {
		if m.ID == "broken" {
			broken = m
		}
	}
	if broken == nil || broken.Level != models.LevelDegraded || len(broken.Scopes) != 1 {
		t.Fatalf("module broken = %+v, want Degraded with one scope", broken)
	}
	if s := broken.Scopes[0]; s.Name != "sync" || s.Message != "cannot sync" || s.Error != "no peer" || s.Since == nil {
		t.Errorf("scope = %+v, want sync: cannot sync: no peer", s)
	}
}
