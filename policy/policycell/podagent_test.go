package policycell_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/kvstore/layout"
	"github.com/apiary-net/apiary/kvstore/store"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policycell"
)

// podAgent is node a of cluster1 with the policy, identity and ipcache
// cells on a real etcd, and policy imported through its API; pods of
// node b are published into the etcd as that node would.
type podAgent struct {
	t      *testing.T
	srv    *kvstoretest.Server
	client *client.Client
	alloc  identity.Allocator
	ipc    ipcache.IPCache
	regen  policy.RegenerationRequests
}

// startPodAgent starts the agent and imports policy.
func startPodAgent(t *testing.T, policy string) *podAgent {
	t.Helper()
	a := &podAgent{t: t, srv: kvstoretest.StartServer(t)}
	socket := filepath.Join(t.TempDir(), "apiary.sock")
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "kvstore=etcd", "kvstore-opt=etcd.address=" + a.srv.Endpoint(),
		"kvstore-heartbeat-writer=false", "cluster-name=cluster1", "cluster-id=1",
		"node-name=node-a", "node-ip=192.0.2.10",
	}, api.Cell, status.Cell, kvstorecell.Cell, store.Cell, localnode.Cell, identitycell.Cell, policycell.Cell, ipcachecell.Cell,
		celltest.Capture(&a.alloc), celltest.Capture(&a.ipc), celltest.Capture(&a.regen))
	a.client = client.New(socket)
	t.Cleanup(a.client.Close)
	if _, err := a.client.PolicyPut(context.Background(), []byte(policy)); err != nil {
		t.Fatal(err)
	}
	return a
}

// pod allocates the identity of a pod app=<app> in namespace default,
// as node b does for its pods.
func (a *podAgent) pod(app string) *identity.Identity {
	a.t.Helper()
	ls, err := labels.ParseList(labels.SourceK8s, "app="+app, labels.KeyPodNamespace+"=default", labels.KeyPolicyCluster+"=cluster1")
	if err != nil {
		a.t.Fatal(err)
	}
	id, _, err := a.alloc.AllocateIdentity(context.Background(), ls)
	if err != nil {
		a.t.Fatal(err)
	}
	return id
}

// publish writes node b's ipcache entry of a pod, with its named ports
// as Cilium's JSON ("null" for none).
func (a *podAgent) publish(ip, name string, id *identity.Identity, ports string) {
	a.t.Helper()
	value := fmt.Sprintf(`{"IP":%q,"Mask":null,"HostIP":"192.0.2.11","ID":%d,"Key":0,"Metadata":"cilium-global:cluster1:node-b:7",`+
		`"K8sNamespace":"default","K8sPodName":%q,"NamedPorts":%s}`, ip, id.ID, name, ports)
	if _, err := a.srv.Client().Put(context.Background(), layout.IPKey(layout.DefaultAddressSpace, ip), value); err != nil {
		a.t.Fatal(err)
	}
}
