package endpointcell_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/statedir"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/policycell"
)

// agent is a hive with the endpoint manager on a given datapath, in
// standalone mode (identities in memory), serving its API.
type agent struct {
	hive   *hive.Hive
	client *client.Client
	alloc  identity.Allocator
	ipc    ipcache.IPCache
}

// agentCells are the control-plane cells the endpoint manager needs.
func agentCells() []cell.Cell {
	return []cell.Cell{api.Cell, status.Cell, localnode.Cell, statedir.Cell, kvstorecell.Cell, store.Cell,
		identitycell.Cell, policycell.Cell, ipcachecell.Cell, endpointcell.Cell}
}

// startAgent starts the agent on stateDir with the datapath cells dp;
// extra flags are appended.
func startAgent(t *testing.T, stateDir string, dp []cell.Cell, flags ...string) *agent {
	t.Helper()
	a := &agent{}
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	cells := append(agentCells(), dp...)
	cells = append(cells, celltest.Capture(&a.alloc), celltest.Capture(&a.ipc))
	a.hive = celltest.StartWithFlags(t, append([]string{
		"socket-path=" + socket, "state-dir=" + stateDir, "cluster-name=c1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24,fd00:1::/120",
	}, flags...), cells...)
	a.client = client.New(socket)
	t.Cleanup(a.client.Close)
	return a
}

// put creates an endpoint through the API.
func (a *agent) put(t *testing.T, id uint16, req models.EndpointRequest) *models.Endpoint {
	t.Helper()
	ep, err := a.client.EndpointPut(context.Background(), id, req)
	if err != nil {
		t.Fatalf("PUT /v1/endpoint/%d: %v", id, err)
	}
	return ep
}

// fakeNetNS is a file standing for a network namespace path, for the
// fake datapath (the manager checks that the path exists).
func fakeNetNS(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
