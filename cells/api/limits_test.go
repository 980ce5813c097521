package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/apitest"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
)

// startAPIWithFlags starts the api-server cell (plus extra cells) with
// extra flags on a temporary socket and returns the socket path.
func startAPIWithFlags(t *testing.T, flags []string, extra ...cell.Cell) string {
	t.Helper()
	path := socketPath(t)
	celltest.StartWithFlags(t, append([]string{"socket-path=" + path}, flags...), append([]cell.Cell{api.Cell}, extra...)...)
	return path
}

func provideHandler(h api.Handler) cell.Cell {
	return cell.Provide(func() api.HandlerOut { return api.HandlerOut{Handler: h} })
}

func TestInvalidLimits(t *testing.T) {
	tests := []struct {
		name string
		give []string
		want string
	}{
		{name: "zero header timeout", give: []string{"api-read-header-timeout=0s"}, want: "--api-read-header-timeout: 0s is not a positive duration"},
		{name: "negative idle timeout", give: []string{"api-idle-timeout=-1s"}, want: "--api-idle-timeout: -1s is not a positive duration"},
		{name: "body timeout not under write timeout", give: []string{"api-read-body-timeout=1m", "api-write-timeout=1m"},
			want: "--api-read-body-timeout: 1m0s is not shorter than --api-write-timeout 1m0s"},
		{name: "no connections", give: []string{"api-max-connections=0"}, want: "--api-max-connections: 0 is not a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHive(t, socketPath(t))
			if err := celltest.SetFlags(h.Flags(), tt.give); err != nil {
				t.Fatal(err)
			}
			err := h.Populate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Populate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestSlowBodyIsCut sends headers and then a byte at a time: the handler's
// read fails with ErrBodyTimeout and the connection is closed.
func TestSlowBodyIsCut(t *testing.T) {
	readErr := make(chan error, 1)
	path := startAPIWithFlags(t, []string{"api-read-body-timeout=300ms"}, provideHandler(api.Handler{
		Method: http.MethodPut, Path: "/v1/upload",
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := io.ReadAll(r.Body)
			readErr <- err
			api.WriteError(w, http.StatusBadRequest, fmt.Errorf("read body: %w", err))
		}),
	}))
	c := apitest.Dial(t, path)
	c.Send(t, "PUT /v1/upload HTTP/1.1\r\nHost: agent\r\nContent-Length: 1000\r\n\r\n")
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sent := c.Trickle(ctx, []byte(strings.Repeat("x", 1000)), 20*time.Millisecond)
	if !c.WaitClosed(5 * time.Second) {
		t.Fatalf("connection still open after %d body bytes, a byte every 20ms", sent)
	}
	if err := <-readErr; !errors.Is(err, api.ErrBodyTimeout) {
		t.Errorf("body read error = %v, want ErrBodyTimeout", err)
	}
	if got := c.Received(); !strings.HasPrefix(got, "HTTP/1.1 400 ") || !strings.Contains(got, "--api-read-body-timeout") {
		t.Errorf("answer = %q, want a 400 naming --api-read-body-timeout", got)
	}
}

// chunkWriter is a handler that writes until a write fails (or its
// request is cancelled) and reports why it stopped.
type chunkWriter struct {
	started chan struct{}
	stopped chan error
}

func newChunkWriter() *chunkWriter {
	return &chunkWriter{started: make(chan struct{}), stopped: make(chan error, 1)}
}

func (c *chunkWriter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	close(c.started)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for {
		if err := r.Context().Err(); err != nil {
			c.stopped <- fmt.Errorf("request context: %w", err)
			return
		}
		if _, err := w.Write(chunk); err != nil {
			c.stopped <- err
			return
		}
	}
}

// TestStreamingHandlerHasNoWriteTimeout stalls the readers of two
// handlers that write without end: the ordinary one is cut by the write
// timeout, the Streaming one, started earlier, keeps streaming.
func TestStreamingHandlerHasNoWriteTimeout(t *testing.T) {
	stream, ordinary := newChunkWriter(), newChunkWriter()
	path := startAPIWithFlags(t, []string{"api-write-timeout=300ms", "api-read-body-timeout=100ms"},
		provideHandler(api.Handler{Method: http.MethodGet, Path: "/v1/stream", Handler: stream, Streaming: true}),
		provideHandler(api.Handler{Method: http.MethodGet, Path: "/v1/ordinary", Handler: ordinary}))

	streamConn := apitest.Dial(t, path)
	streamConn.Send(t, "GET /v1/stream HTTP/1.1\r\nHost: agent\r\n\r\n")
	<-stream.started
	ordinaryConn := apitest.Dial(t, path)
	ordinaryConn.Send(t, "GET /v1/ordinary HTTP/1.1\r\nHost: agent\r\n\r\n")
	// Both answers are read as fast as they come: only the write
	// deadline can stop a handler.
	select {
	case err := <-ordinary.stopped:
		if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "timeout") {
			t.Errorf("ordinary handler stopped with %v, want a write timeout", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the ordinary handler was not cut by --api-write-timeout=300ms")
	}
	select {
	case err := <-stream.stopped:
		t.Fatalf("the streaming handler stopped: %v", err)
	default:
	}
	before := streamConn.ReceivedBytes()
	celltest.Eventually(t, "the streaming answer to go on", func() bool {
		return streamConn.ReceivedBytes() > before+1<<20
	})
	streamConn.Close()
	<-stream.stopped
}

// TestStalledConnectionsMakeRoom fills the cap with connections that
// sent half a request: each new connection closes the one that has
// waited longest, and healthz answers at once.
func TestStalledConnectionsMakeRoom(t *testing.T) {
	const maxConns, extra = 3, 4
	path := startAPIWithFlags(t, []string{fmt.Sprintf("api-max-connections=%d", maxConns)})
	var stalled []*apitest.Conn
	for range maxConns + extra {
		c := apitest.Dial(t, path)
		c.Send(t, "GET /v1/healthz HTTP/1.1\r\n")
		stalled = append(stalled, c)
	}
	c := client.New(path)
	defer c.Close()
	if _, err := c.Healthz(t.Context()); err != nil {
		t.Fatalf("Healthz with %d stalled connections: %v", len(stalled), err)
	}
	closedCount := func() int {
		n := 0
		for _, s := range stalled {
			if s.IsClosed() {
				n++
			}
		}
		return n
	}
	celltest.Eventually(t, fmt.Sprintf("%d stalled connections closed", extra+1), func() bool {
		return closedCount() == extra+1
	})
	for i, s := range stalled[:extra+1] {
		if !s.IsClosed() {
			t.Errorf("stalled connection %d is open, want the oldest %d closed", i, extra+1)
		}
	}
}

// TestBusyConnectionsRefuse fills the cap with requests being served: a
// new request is refused with 503 at once, and served once they finish.
func TestBusyConnectionsRefuse(t *testing.T) {
	const maxConns = 2
	entered, release := make(chan struct{}, maxConns), make(chan struct{})
	path := startAPIWithFlags(t, []string{fmt.Sprintf("api-max-connections=%d", maxConns)},
		provideHandler(api.Handler{Method: http.MethodGet, Path: "/v1/block", Handler: http.HandlerFunc(
			func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				<-release
				api.WriteJSON(w, http.StatusOK, "done")
			})}))
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	var blocked []*apitest.Conn
	for range maxConns {
		c := apitest.Dial(t, path)
		c.Send(t, "GET /v1/block HTTP/1.1\r\nHost: agent\r\n\r\n")
		blocked = append(blocked, c)
		<-entered
	}
	c := client.New(path)
	defer c.Close()
	_, err := c.Version(t.Context())
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable ||
		!strings.Contains(apiErr.Message, "maximum of 2 API connections (--api-max-connections)") {
		t.Fatalf("Version at the cap = %v, want a 503 naming --api-max-connections", err)
	}
	close(release)
	for _, b := range blocked {
		celltest.Eventually(t, "the blocked request to be answered", func() bool {
			return strings.Contains(b.Received(), `"done"`)
		})
	}
	if _, err := c.Version(t.Context()); err != nil {
		t.Fatalf("Version once the requests are done: %v", err)
	}
}

// TestStopDoesNotWaitForStalledClients stops the server while a client
// is half-way through its headers (with a header timeout far longer than
// the stop's deadline): the stop closes it and succeeds.
func TestStopDoesNotWaitForStalledClients(t *testing.T) {
	path := socketPath(t)
	var errorLog syncBuffer
	h := hive.NewWithOptions(hive.Options{Logger: slog.New(slog.NewTextHandler(&errorLog, &slog.HandlerOptions{Level: slog.LevelError}))}, api.Cell)
	if err := celltest.SetFlags(h.Flags(), []string{"socket-path=" + path,
		"api-read-header-timeout=10m", "api-read-body-timeout=10m", "api-write-timeout=20m"}); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	headers := apitest.Dial(t, path)
	headers.Send(t, "GET /v1/healthz HTTP/1.1\r\nHost: ag")
	body := apitest.Dial(t, path)
	body.Send(t, "PUT /v1/healthz HTTP/1.1\r\nHost: agent\r\nContent-Length: 10\r\n\r\n#")
	c := client.New(path)
	if _, err := c.Version(t.Context()); err != nil { // an idle kept-alive connection too
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := h.Stop(ctx); err != nil {
		t.Fatalf("Stop = %v, want the stalled connections closed and no error", err)
	}
	c.Close()
	if !headers.WaitClosed(5*time.Second) || !body.WaitClosed(5*time.Second) {
		t.Error("stalled connections still open after stop")
	}
	if errorLog.String() != "" {
		t.Errorf("errors logged while stopping: %s", errorLog.String())
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
