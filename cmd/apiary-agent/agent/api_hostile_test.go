package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/apitest"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
)

// startAgent starts the whole agent with extra flags and returns its
// socket.
func startAgent(t *testing.T, extra ...string) string {
	t.Helper()
	socket, flags := tempFlags(t)
	celltest.StartWithFlags(t, append(flags, extra...), agent.Agent)
	return socket
}

// requireStatusOK asks for the status and fails unless the agent answers
// and no subsystem fails or warns.
func requireStatusOK(t *testing.T, socket string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c := client.New(socket)
	defer c.Close()
	st, err := c.Status(ctx)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	for _, e := range st.Entries {
		if e.State == status.Failure || e.State == status.Warning {
			t.Errorf("status %s: %s %s", e.Name, e.State, e.Message)
		}
	}
	hz, err := c.Healthz(ctx)
	if err != nil || hz.Status != models.HealthzOK {
		t.Errorf("healthz = %+v, %v, want ok", hz, err)
	}
}

// TestSlowClientsAreClosed sends a request a byte at a time, in its
// headers or in its body: the agent closes the connection after the
// timeout, and still answers the status.
func TestSlowClientsAreClosed(t *testing.T) {
	tests := []struct {
		name   string
		start  string // sent at once
		slowly string // then a byte every 20ms
		want   string // the start of the answer, if any
	}{
		{
			name:   "slow headers",
			start:  "GET /v1/status HTTP/1.1\r\n",
			slowly: "Host: agent\r\nX-Slow: " + strings.Repeat("x", 1000) + "\r\n\r\n",
		},
		{
			name:   "slow body",
			start:  "PUT /v1/policy HTTP/1.1\r\nHost: agent\r\nContent-Type: application/yaml\r\nContent-Length: 1000\r\n\r\n",
			slowly: strings.Repeat("#", 1000),
			want:   "HTTP/1.1 400 Bad Request",
		},
	}
	socket := startAgent(t, "api-read-header-timeout=300ms", "api-read-body-timeout=300ms")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := apitest.Dial(t, socket)
			c.Send(t, tt.start)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			sent := c.Trickle(ctx, []byte(tt.slowly), 20*time.Millisecond)
			if !c.WaitClosed(5 * time.Second) {
				t.Fatalf("connection still open after %d of %d bytes sent a byte every 20ms", sent, len(tt.slowly))
			}
			if sent == len(tt.slowly) {
				t.Errorf("the agent read all %d bytes: the timeout did not cut the request", sent)
			}
			if got := c.Received(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("answer %q, want it to start with %q", got, tt.want)
			}
			requireStatusOK(t, socket)
		})
	}
}

// TestStalledConnectionsDoNotStopStatus opens more connections than
// --api-max-connections that stall (half a request, a body that does not
// come, or idle after an answer): the agent closes the oldest to make
// room, status answers at once, and the agent stays healthy. The
// timeouts are long, so only the cap closes connections.
func TestStalledConnectionsDoNotStopStatus(t *testing.T) {
	const maxConns, extra = 4, 8
	socket := startAgent(t, fmt.Sprintf("api-max-connections=%d", maxConns),
		"api-read-header-timeout=1m", "api-read-body-timeout=1m", "api-idle-timeout=1m", "api-write-timeout=2m")
	stallers := []func(t *testing.T, c *apitest.Conn){
		func(t *testing.T, c *apitest.Conn) { c.Send(t, "GET /v1/status HTTP/1.1\r\nHost: ag") },
		func(t *testing.T, c *apitest.Conn) {
			c.Send(t, "PUT /v1/policy HTTP/1.1\r\nHost: agent\r\nContent-Length: 100\r\n\r\n#")
		},
		func(t *testing.T, c *apitest.Conn) {
			c.Send(t, "GET /v1/healthz HTTP/1.1\r\nHost: agent\r\n\r\n")
			celltest.Eventually(t, "the healthz answer", func() bool { return strings.Contains(c.Received(), `"ok"`) })
		},
	}
	var stalled []*apitest.Conn
	for i := range maxConns + extra {
		c := apitest.Dial(t, socket)
		stallers[i%len(stallers)](t, c)
		stalled = append(stalled, c)
	}
	requireStatusOK(t, socket)
	closed := func() int {
		n := 0
		for _, c := range stalled {
			if c.IsClosed() {
				n++
			}
		}
		return n
	}
	// extra to make room for the last stallers, one for the status
	// request (the client keeps its connection afterwards).
	celltest.Eventually(t, fmt.Sprintf("%d stalled connections closed", extra+1), func() bool { return closed() >= extra+1 })
	if n := closed(); n != extra+1 {
		t.Errorf("%d stalled connections closed, want %d: the agent holds %d at most", n, extra+1, maxConns)
	}
}
