package kvstore_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// startAgent starts the kvstore cell with the API and status cells and
// returns an API client.
func startAgent(t *testing.T, flags ...string) (*client.Client, kvstore.Client) {
	t.Helper()
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	var c kvstore.Client
	celltest.StartWithFlags(t, append(flags, "socket-path="+socket),
		api.Cell, status.Cell, kvstore.Cell, celltest.Capture(&c))
	cl := client.New(socket)
	t.Cleanup(cl.Close)
	return cl, c
}

func kvstoreLine(t *testing.T, cl *client.Client, ok func(models.StatusEntry) bool) models.StatusEntry {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, err := cl.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range st.Entries {
			if e.Name == "KVStore" && ok(e) {
				return e
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no matching KVStore line in %+v", st.Entries)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func TestCellAgainstRealEtcd(t *testing.T) {
	srv := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	cl, kv := startAgent(t, "kvstore=etcd", "kvstore-opt=etcd.config="+srv.WriteConfigFile())
	line := kvstoreLine(t, cl, func(e models.StatusEntry) bool { return e.State == status.Ok })
	re := regexp.MustCompile(`^etcd: 1/1 connected, leases=\d+, lock leases=0, has-quorum=true: https://127\.0\.0\.1:\d+ - 3\.\d+\.\d+ \(Leader\)$`)
	if !re.MatchString(line.Message) {
		t.Errorf("KVStore line = %q, want Cilium's format", line.Message)
	}

	must(t, kv.Update(context.Background(), "cilium/state/nodes/v1/c1/n1", []byte(`{"Name":"n1"}`), true))
	p, err := cl.KVStoreGet(context.Background(), "cilium/state/nodes/v1/c1/n1")
	if err != nil || p.Value != `{"Name":"n1"}` {
		t.Errorf("GET /v1/kvstore/<key> = %+v, %v", p, err)
	}
	list, err := cl.KVStoreList(context.Background(), "cilium/")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, p := range list {
		keys = append(keys, p.Key)
	}
	// The heartbeat writer is on by default.
	if strings.Join(keys, " ") != "cilium/.heartbeat cilium/state/nodes/v1/c1/n1" || list[1].Lease == "" {
		t.Errorf("list = %+v, want the heartbeat and n1 with its lease", list)
	}
	var apiErr *client.APIError
	if _, err := cl.KVStoreGet(context.Background(), "cilium/nope"); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("missing key: %v, want a 404", err)
	}
}

func TestCellStandalone(t *testing.T) {
	cl, kv := startAgent(t)
	if kv.Enabled() {
		t.Error("Enabled() with --kvstore empty")
	}
	line := kvstoreLine(t, cl, func(models.StatusEntry) bool { return true })
	if line.State != status.Disabled || line.Message != "standalone mode: --kvstore is empty" {
		t.Errorf("KVStore line = %s %q", line.State, line.Message)
	}
	var apiErr *client.APIError
	if _, err := cl.KVStoreList(context.Background(), ""); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("list in standalone mode: %v, want 503", err)
	}
	if err := kv.Update(context.Background(), "k", nil, false); !errors.Is(err, kvstore.ErrDisabled) {
		t.Errorf("Update = %v, want ErrDisabled", err)
	}
}

func TestCellUnreachableKeepsRunning(t *testing.T) {
	cl, _ := startAgent(t, "kvstore=etcd", "kvstore-opt=etcd.address=http://127.0.0.1:1",
		"kvstore-connectivity-timeout=500ms")
	line := kvstoreLine(t, cl, func(e models.StatusEntry) bool { return strings.Contains(e.Message, "not able to connect") })
	if line.State != status.Failure || !strings.Contains(line.Message, "next in 5s") {
		t.Errorf("KVStore line = %s %q, want a Failure with the retry interval", line.State, line.Message)
	}
}

func TestCellBadConfigStopsAtPopulate(t *testing.T) {
	dir := t.TempDir()
	noEndpoints := filepath.Join(dir, "etcd.yaml")
	must(t, os.WriteFile(noEndpoints, []byte("trusted-ca-file: /etc/ca.crt\n"), 0o600))
	badCA := filepath.Join(dir, "bad-ca.yaml")
	must(t, os.WriteFile(badCA, []byte("endpoints: [https://127.0.0.1:2379]\ntrusted-ca-file: "+filepath.Join(dir, "missing.crt")+"\n"), 0o600))
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"missing file", []string{"kvstore=etcd", "kvstore-opt=etcd.config=" + filepath.Join(dir, "nope.yaml")}, "read etcd config: open " + filepath.Join(dir, "nope.yaml")},
		{"missing field", []string{"kvstore=etcd", "kvstore-opt=etcd.config=" + noEndpoints}, "etcd config " + noEndpoints + ": field endpoints"},
		{"unreadable CA", []string{"kvstore=etcd", "kvstore-opt=etcd.config=" + badCA}, "field trusted-ca-file"},
		{"unknown option", []string{"kvstore=etcd", "kvstore-opt=etcd.adress=http://x:2379"}, `unknown option "etcd.adress"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := celltest.Populate(t, append(tc.flags, "socket-path="+filepath.Join(t.TempDir(), "s.sock")),
				api.Cell, status.Cell, kvstore.Cell)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Populate() = %v, want %q", err, tc.want)
			}
		})
	}
}
