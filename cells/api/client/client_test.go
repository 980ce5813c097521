package client_test

import (
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
)

func TestUnreachable(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		give    func(t *testing.T) string
		wantErr error
	}{
		{
			name:    "missing socket",
			give:    func(*testing.T) string { return filepath.Join(dir, "missing.sock") },
			wantErr: syscall.ENOENT,
		},
		{
			name: "stale socket",
			give: func(t *testing.T) string {
				p := filepath.Join(dir, "stale.sock")
				l, err := net.ListenUnix("unix", &net.UnixAddr{Name: p, Net: "unix"})
				if err != nil {
					t.Fatal(err)
				}
				l.SetUnlinkOnClose(false)
				l.Close()
				return p
			},
			wantErr: syscall.ECONNREFUSED,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.give(t)
			_, err := client.New(path).Status(t.Context())
			if !errors.Is(err, client.ErrNotReachable) || !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want ErrNotReachable wrapping %v", err, tt.wantErr)
			}
			msg := err.Error()
			wantPrefix := "cannot reach apiary-agent at " + path + ": is it running? (dial unix " + path + ": "
			if !strings.HasPrefix(msg, wantPrefix) || strings.Contains(msg, "\n") {
				t.Errorf("message = %q, want one line starting %q", msg, wantPrefix)
			}
		})
	}
}

func TestAPIErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, []string{"socket-path=" + path}, api.Cell,
		cell.Provide(func() api.HandlerOut {
			return api.NewHandlerOut("GET", "/v1/plain", func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "teapot\nsays no", http.StatusTeapot)
			})
		}),
		cell.Provide(func() api.HandlerOut {
			return api.NewHandlerOut("POST", "/v1/echo", func(w http.ResponseWriter, r *http.Request) {
				var in map[string]string
				if err := decode(r, &in); err != nil {
					api.WriteError(w, http.StatusBadRequest, err)
					return
				}
				api.WriteJSON(w, http.StatusCreated, in)
			})
		}),
	)
	c := client.New(path)
	defer c.Close()
	tests := []struct {
		name     string
		method   string
		path     string
		body     any
		wantCode int
		wantMsg  string
	}{
		{name: "json error", method: "GET", path: "/v1/nope", wantCode: 404, wantMsg: "no API endpoint GET /v1/nope"},
		{name: "plain error", method: "GET", path: "/v1/plain", wantCode: 418, wantMsg: "teapot says no"},
		{name: "bad request", method: "POST", path: "/v1/echo", body: []int{1}, wantCode: 400, wantMsg: "decode body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := c.Do(t.Context(), tt.method, tt.path, tt.body)
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want an APIError", err)
			}
			if apiErr.StatusCode != tt.wantCode || !strings.Contains(apiErr.Message, tt.wantMsg) {
				t.Errorf("APIError = %d %q, want %d %q", apiErr.StatusCode, apiErr.Message, tt.wantCode, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), tt.method+" "+tt.path+": ") {
				t.Errorf("message %q does not name the request", err)
			}
		})
	}
	t.Run("success", func(t *testing.T) {
		code, body, err := c.Do(t.Context(), "POST", "/v1/echo", map[string]string{"a": "b"})
		if err != nil || code != http.StatusCreated || !strings.Contains(string(body), `"a": "b"`) {
			t.Fatalf("Do = %d %q %v, want 201 echoing the body", code, body, err)
		}
	})
}
