package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

// socketPath returns a socket path in a fresh temporary directory.
func socketPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "apiary.sock")
}

// startAPI starts the api-server cell (plus extra cells) on a temporary
// socket and returns the socket path.
func startAPI(t *testing.T, extra ...cell.Cell) string {
	t.Helper()
	path := socketPath(t)
	celltest.StartWithFlags(t, []string{"socket-path=" + path}, append([]cell.Cell{api.Cell}, extra...)...)
	return path
}

// newHive builds (without populating) a hive with the api-server cell.
func newHive(t *testing.T, path string, extra ...cell.Cell) *hive.Hive {
	t.Helper()
	h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, append([]cell.Cell{api.Cell}, extra...)...)
	if err := celltest.SetFlags(h.Flags(), []string{"socket-path=" + path}); err != nil {
		t.Fatalf("set flags: %v", err)
	}
	return h
}

// rawResponse is an answer read without package client.
type rawResponse struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a raw HTTP request over the socket.
func do(t *testing.T, path, method, urlPath string) rawResponse {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(t.Context(), method, "http://agent"+urlPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, urlPath, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawResponse{code: resp.StatusCode, header: resp.Header, body: body}
}

// jsonError decodes an {"error": ...} body, failing if it is not one.
func jsonError(t *testing.T, r rawResponse) string {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json (body %q)", ct, r.body)
	}
	var e struct {
		Error *string `json:"error"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error == nil {
		t.Fatalf("body %q is not a JSON error: %v", r.body, err)
	}
	return *e.Error
}
