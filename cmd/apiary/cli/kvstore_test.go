package cli_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/kvstore"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

func TestKVStoreCommands(t *testing.T) {
	srv := kvstoretest.StartServer(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	var kv kvstore.Client
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"), "bpf-root=" + bpfmaptest.Root(t),
		"kvstore=etcd", "kvstore-opt=etcd.address=" + srv.Endpoint(), "kvstore-heartbeat-writer=false",
	}, agent.Agent, celltest.Capture(&kv))
	ctx := context.Background()
	if err := kv.Update(ctx, "cilium/state/nodes/v1/c1/n1", []byte(`{"Name":"n1"}`), false); err != nil {
		t.Fatal(err)
	}
	if err := kv.Update(ctx, "cilium/state/nodes/v1/c1/n2", []byte(`{"Name":"n2"}`), false); err != nil {
		t.Fatal(err)
	}

	// Under c1, not the agent's cluster: the agent registers its own node
	// under cilium/state/nodes/v1/default/.
	code, out, errOut := run(t, socket, "kvstore", "list", "cilium/state/nodes/v1/c1/")
	want := "cilium/state/nodes/v1/c1/n1 => {\"Name\":\"n1\"}\ncilium/state/nodes/v1/c1/n2 => {\"Name\":\"n2\"}\n"
	if code != 0 || out != want {
		t.Errorf("kvstore list = %d %q (stderr %q), want %q", code, out, errOut, want)
	}
	code, out, _ = run(t, socket, "kvstore", "get", "cilium/state/nodes/v1/c1/n1", "-o", "json")
	var p models.KVPair
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Value != `{"Name":"n1"}` {
		t.Errorf("kvstore get -o json = %d %q", code, out)
	}
	code, _, errOut = run(t, socket, "kvstore", "get", "cilium/missing")
	if code != 1 || errOut != "GET /v1/kvstore/cilium/missing: 404 Not Found: key \"cilium/missing\" not found\n" {
		t.Errorf("missing key = %d %q, want 1 and one line", code, errOut)
	}
}
