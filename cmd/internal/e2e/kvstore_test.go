package e2e_test

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// stopBound is how long apiary-agent may take to exit after SIGTERM,
// whatever state its etcd is in.
const stopBound = 5 * time.Second

// statusEntry returns the state and message of one line of `apiary
// status` ("" when the agent does not answer).
func statusEntry(t *testing.T, cli, socket, name string) string {
	t.Helper()
	code, out, _ := runCLI(t, cli, socket, "status", "-o", "json")
	if code != 0 && code != 1 { // 1: some line is not Ok
		return ""
	}
	var st models.Status
	if json.Unmarshal([]byte(out), &st) != nil {
		return ""
	}
	for _, e := range st.Entries {
		if e.Name == name {
			return string(e.State) + " " + e.Message
		}
	}
	return ""
}

var lockInFlight = regexp.MustCompile(`(?m)^apiary_kvstore_operations_in_flight\{operation="lock"\} [1-9]`)

// TestAgentStopsWithEtcdGone sends SIGTERM to apiary-agent while its etcd
// is unreachable (from the start, or since it was killed after a normal
// start): it must exit 0 within a few seconds, every stop hook done.
func TestAgentStopsWithEtcdGone(t *testing.T) {
	agentBin, cliBin := buildBinaries(t)
	for _, tc := range []struct {
		name string
		// etcd returns the address to give the agent and what to do
		// to etcd once the agent has started.
		etcd func(t *testing.T) (addr string, gone func(t *testing.T, socket string))
	}{
		{"unreachable from the start", func(*testing.T) (string, func(*testing.T, string)) {
			return "http://127.0.0.1:1", func(t *testing.T, socket string) {
				// The identity GC waits for its lock session.
				celltest.Eventually(t, "a lock in flight", func() bool {
					metrics := strings.TrimPrefix(statusEntry(t, cliBin, socket, "Metrics"), "Ok serving /metrics on ")
					resp, err := http.Get("http://" + metrics + "/metrics")
					if err != nil {
						return false
					}
					defer resp.Body.Close()
					body, _ := io.ReadAll(resp.Body)
					return lockInFlight.Match(body)
				})
			}
		}},
		{"killed after a normal start", func(t *testing.T) (string, func(*testing.T, string)) {
			srv := kvstoretest.StartServer(t)
			return srv.Endpoint(), func(t *testing.T, socket string) {
				celltest.Eventually(t, "the KVStore line Ok", func() bool {
					return strings.HasPrefix(statusEntry(t, cliBin, socket, "KVStore"), "Ok ")
				})
				srv.Stop()
				celltest.Eventually(t, "the KVStore line failing", func() bool {
					return strings.HasPrefix(statusEntry(t, cliBin, socket, "KVStore"), "Failure ")
				})
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, gone := tc.etcd(t)
			dir := t.TempDir()
			socket := filepath.Join(dir, "apiary.sock")
			agent := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+filepath.Join(dir, "state"),
				"--prometheus-serve-addr=127.0.0.1:0", "--kvstore=etcd", "--kvstore-opt=etcd.address="+addr,
				"--kvstore-connectivity-timeout=1s")
			agent.waitStarted(t)
			gone(t, socket)

			begin := time.Now()
			agent.terminate(t)
			if code := agent.waitWithin(t, stopBound); code != 0 {
				t.Fatalf("apiary-agent exited %d after SIGTERM:\n%s", code, agent.Log())
			}
			t.Logf("exited %s after SIGTERM", time.Since(begin).Round(time.Millisecond))
			log := agent.Log()
			if !regexp.MustCompile(`(?s)msg=Stopping reason="terminated signal received".*msg=Stopped`).MatchString(log) ||
				strings.Contains(log, "Stop hook failed") {
				t.Errorf("log does not show an orderly stop:\n%s", log)
			}
		})
	}
}
