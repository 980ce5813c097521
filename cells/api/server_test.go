package api_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/version"
)

func TestBuiltinEndpoints(t *testing.T) {
	path := startAPI(t)
	c := client.New(path)
	defer c.Close()
	ctx := t.Context()

	t.Run("healthz", func(t *testing.T) {
		hz, err := c.Healthz(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if hz.Status != models.HealthzOK || len(hz.Degraded) != 0 {
			t.Errorf("Healthz = %+v, want ok", hz)
		}
	})
	t.Run("hive", func(t *testing.T) {
		h, err := c.Hive(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Modules) != 1 {
			t.Fatalf("Modules = %d, want 1 (api-server)", len(h.Modules))
		}
		m := h.Modules[0]
		if m.ID != "api-server" || m.Title != "REST API on a unix socket" || m.Level != models.LevelOK {
			t.Errorf("module = %+v, want api-server, its title, OK", m)
		}
		if !strings.Contains(m.Message, path) || m.Since == nil {
			t.Errorf("module message = %q since %v, want the socket path and a time", m.Message, m.Since)
		}
	})
	t.Run("controllers", func(t *testing.T) {
		raw := do(t, path, http.MethodGet, "/v1/controllers")
		if raw.code != http.StatusOK || strings.TrimSpace(string(raw.body)) != "[]" {
			t.Errorf("GET /v1/controllers = %d %q, want 200 []", raw.code, raw.body)
		}
	})
	t.Run("version", func(t *testing.T) {
		v, err := c.Version(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if *v != version.Get() {
			t.Errorf("Version = %+v, want %+v", *v, version.Get())
		}
	})
}

func TestErrorsAreJSON(t *testing.T) {
	path := startAPI(t, cell.Provide(func() api.HandlerOut {
		return api.NewHandlerOut(http.MethodGet, "/v1/panic", func(http.ResponseWriter, *http.Request) {
			panic("boom")
		})
	}))
	tests := []struct {
		name      string
		method    string
		path      string
		wantCode  int
		wantError string
		wantAllow string
	}{
		{name: "unknown path", method: "GET", path: "/v1/nope", wantCode: 404, wantError: "no API endpoint GET /v1/nope"},
		{name: "root", method: "GET", path: "/", wantCode: 404, wantError: "no API endpoint GET /"},
		{name: "dot segments", method: "GET", path: "/v1/healthz/../version", wantCode: 400,
			wantError: `path "/v1/healthz/../version" has empty, . or .. segments (its clean form is "/v1/version")`},
		{name: "empty segment", method: "GET", path: "/v1//healthz", wantCode: 400,
			wantError: `path "/v1//healthz" has empty, . or .. segments (its clean form is "/v1/healthz")`},
		{name: "wrong method", method: "POST", path: "/v1/healthz", wantCode: 405,
			wantError: "method POST not allowed on /v1/healthz (allowed: GET, HEAD)", wantAllow: "GET, HEAD"},
		{name: "panicking handler", method: "GET", path: "/v1/panic", wantCode: 500,
			wantError: "internal error serving GET /v1/panic"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, path, tt.method, tt.path)
			if r.code != tt.wantCode {
				t.Errorf("status = %d, want %d", r.code, tt.wantCode)
			}
			if got := jsonError(t, r); got != tt.wantError {
				t.Errorf("error = %q, want %q", got, tt.wantError)
			}
			if got := r.header.Get("Allow"); got != tt.wantAllow {
				t.Errorf("Allow = %q, want %q", got, tt.wantAllow)
			}
		})
	}
	t.Run("client gets an APIError", func(t *testing.T) {
		_, err := client.New(path).GetRaw(t.Context(), "/v1/nope")
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Message != "no API endpoint GET /v1/nope" {
			t.Fatalf("err = %v, want an APIError 404", err)
		}
	})
}

func TestSocketFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run", "apiary")
	path := filepath.Join(dir, "apiary.sock")
	h := newHive(t, path)
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Type() != fs.ModeSocket || info.Mode().Perm() != 0o660 {
		t.Errorf("socket mode = %v, want a socket with 0660", info.Mode())
	}
	dirInfo, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if dirInfo.Mode().Perm() != 0o750 {
		t.Errorf("socket directory mode = %v, want 0750", dirInfo.Mode().Perm())
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket still there after stop: %v", err)
	}
	if _, err := client.New(path).Healthz(t.Context()); !errors.Is(err, client.ErrNotReachable) {
		t.Errorf("Healthz after stop: err = %v, want ErrNotReachable", err)
	}
}

func TestStaleSocketIsReplaced(t *testing.T) {
	path := socketPath(t)
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close() // leaves the socket file behind, as a crashed agent would
	if _, err := os.Lstat(path); err != nil {
		t.Fatalf("stale socket not left behind: %v", err)
	}
	celltest.StartWithFlags(t, []string{"socket-path=" + path}, api.Cell)
	if _, err := client.New(path).Healthz(t.Context()); err != nil {
		t.Fatalf("Healthz on the replaced socket: %v", err)
	}
}

func TestStartRefuses(t *testing.T) {
	t.Run("live socket", func(t *testing.T) {
		path := socketPath(t)
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		err = newHive(t, path).Start(t.Context())
		if !errors.Is(err, api.ErrSocketInUse) || !strings.Contains(err.Error(), path) {
			t.Fatalf("Start = %v, want ErrSocketInUse naming %s", err, path)
		}
		if _, err := os.Lstat(path); err != nil {
			t.Errorf("the other process's socket was removed: %v", err)
		}
	})
	t.Run("regular file", func(t *testing.T) {
		path := socketPath(t)
		if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := newHive(t, path).Start(t.Context())
		if err == nil || !strings.Contains(err.Error(), "is not a socket") || !strings.Contains(err.Error(), path) {
			t.Fatalf("Start = %v, want an error saying %s is not a socket", err, path)
		}
		if b, _ := os.ReadFile(path); string(b) != "keep me" {
			t.Errorf("file was replaced: %q", b)
		}
	})
	t.Run("second agent on the same socket", func(t *testing.T) {
		path := startAPI(t)
		err := newHive(t, path).Start(t.Context())
		if !errors.Is(err, api.ErrSocketInUse) {
			t.Fatalf("Start = %v, want ErrSocketInUse", err)
		}
		if _, err := client.New(path).Healthz(t.Context()); err != nil {
			t.Errorf("first agent no longer reachable: %v", err)
		}
	})
}

func TestInvalidSocketPath(t *testing.T) {
	tests := []struct {
		name string
		give string
		want string
	}{
		{name: "empty", give: "", want: "--socket-path: must not be empty"},
		{name: "relative", give: "run/apiary.sock", want: `--socket-path: "run/apiary.sock" is not an absolute path`},
		{name: "directory", give: "/run/apiary/", want: "names a directory"},
		{name: "too long", give: "/" + strings.Repeat("x", 120) + ".sock", want: "more than the 107 a unix socket path can hold"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := newHive(t, tt.give).Populate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Populate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
