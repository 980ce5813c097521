package agent_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// stopBound is how long stopping the agent may take whatever state etcd
// is in.
const stopBound = 5 * time.Second

// statusLine returns the agent's status line name ("" if unreachable).
func statusLine(t *testing.T, c *client.Client, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.Status(ctx)
	if err != nil {
		return ""
	}
	for _, e := range st.Entries {
		if e.Name == name {
			return string(e.State) + " " + e.Message
		}
	}
	return ""
}

// metricsText returns what the agent's /metrics serves.
func metricsText(t *testing.T, c *client.Client) string {
	t.Helper()
	addr := strings.TrimPrefix(strings.TrimPrefix(statusLine(t, c, "Metrics"), "Ok "), "serving /metrics on ")
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

var lockInFlight = regexp.MustCompile(`(?m)^apiary_kvstore_operations_in_flight\{operation="lock"\} [1-9]`)

// TestStopWithEtcdGone stops a whole agent whose etcd is unreachable from
// the start, or went away after a normal start, while kvstore calls wait
// on it: the stop hooks must all finish, within a few seconds.
func TestStopWithEtcdGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		// etcd returns the address to give the agent and what to do
		// to etcd once the agent has started.
		etcd func(t *testing.T) (addr string, gone func(t *testing.T, c *client.Client))
	}{
		{"unreachable from the start", func(*testing.T) (string, func(*testing.T, *client.Client)) {
			return "http://127.0.0.1:1", func(t *testing.T, c *client.Client) {
				// The identity GC waits for its lock session.
				celltest.Eventually(t, "a lock in flight", func() bool { return lockInFlight.MatchString(metricsText(t, c)) })
			}
		}},
		{"killed after a normal start", func(t *testing.T) (string, func(*testing.T, *client.Client)) {
			srv := kvstoretest.StartServer(t)
			return srv.Endpoint(), func(t *testing.T, c *client.Client) {
				celltest.Eventually(t, "the KVStore line Ok", func() bool { return strings.HasPrefix(statusLine(t, c, "KVStore"), "Ok ") })
				srv.Stop()
				celltest.Eventually(t, "the KVStore line failing", func() bool { return strings.HasPrefix(statusLine(t, c, "KVStore"), "Failure ") })
			}
		}},
		{"packets dropped after a normal start", func(t *testing.T) (string, func(*testing.T, *client.Client)) {
			srv := kvstoretest.StartServer(t)
			return srv.Endpoint(), func(t *testing.T, c *client.Client) {
				celltest.Eventually(t, "the KVStore line Ok", func() bool { return strings.HasPrefix(statusLine(t, c, "KVStore"), "Ok ") })
				srv.Blackhole()
				celltest.Eventually(t, "the KVStore line failing", func() bool { return strings.HasPrefix(statusLine(t, c, "KVStore"), "Failure ") })
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, gone := tc.etcd(t)
			socket, flags := tempFlags(t)
			flags = append(flags, "prometheus-serve-addr=127.0.0.1:0", "kvstore=etcd",
				"kvstore-opt=etcd.address="+addr, "kvstore-connectivity-timeout=1s")
			h := celltest.New(t, flags, agent.Agent)
			if err := h.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			c := client.New(socket)
			defer c.Close()
			stopped := false
			defer func() {
				if !stopped {
					_ = h.Stop(context.Background())
				}
			}()
			gone(t, c)

			ctx, cancel := context.WithTimeout(context.Background(), stopBound)
			defer cancel()
			begin := time.Now()
			err := h.Stop(ctx)
			stopped = true
			if err != nil {
				t.Fatalf("stop: %v", err)
			}
			t.Logf("stopped in %s", time.Since(begin).Round(time.Millisecond))
		})
	}
}
