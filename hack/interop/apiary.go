package interop

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/clustermesh/publish"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// ApiaryAgent is one apiary agent (the whole agent hive) of a cluster.
type ApiaryAgent struct {
	Name      string
	IPC       ipcache.IPCache
	Alloc     identity.Allocator
	Nodes     node.Manager
	Publisher publish.Leadership
	// Client talks to the agent's REST API, as the apiary CLI does.
	Client *client.Client
	hive   *hive.Hive
	status []status.Provider
}

type statusProviders struct {
	cell.In

	All []status.Provider `group:"status-providers"`
}

// Status returns the agent's status line name (as `apiary status`
// shows it).
func (a *ApiaryAgent) Status(t *testing.T, name string) status.Report {
	t.Helper()
	for _, p := range a.status {
		if p.Name == name {
			return p.Probe(t.Context())
		}
	}
	t.Fatalf("%s: no status line %q", a.Name, name)
	return status.Report{}
}

// Stop stops the agent, as on SIGTERM: its leased keys go with it.
func (a *ApiaryAgent) Stop(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.hive.Stop(ctx); err != nil {
		t.Fatalf("stop %s: %v", a.Name, err)
	}
}

// StartApiaryAgent starts the whole apiary agent named node, of cluster
// name with id, on the etcd of srv (its TLS config file included), with
// the extra flags ("clustermesh-config=<dir>"); it stops when the test
// ends.
func StartApiaryAgent(t *testing.T, srv *kvstoretest.Server, cluster string, id int, node, nodeIP string, flags ...string) *ApiaryAgent {
	t.Helper()
	dir := t.TempDir()
	a := &ApiaryAgent{Name: node}
	socket := filepath.Join(dir, "apiary.sock")
	a.hive = celltest.StartWithFlags(t, append([]string{
		"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"),
		"bpf-root=" + bpfmaptest.Root(t), // a private bpffs per agent
		"prometheus-serve-addr=127.0.0.1:0",
		"kvstore=etcd", "kvstore-opt=etcd.config=" + srv.WriteConfigFile(),
		// The shortest lease: the keys of a stopped agent expire in
		// seconds, as they would after the default 15m.
		"kvstore-lease-ttl=5s",
		"cluster-name=" + cluster, "cluster-id=" + itoa(id),
		"node-name=" + node, "node-ip=" + nodeIP,
	}, flags...), agent.Agent, celltest.Capture(&a.IPC), celltest.Capture(&a.Alloc), celltest.Capture(&a.Publisher),
		celltest.Capture(&a.Nodes), cell.Invoke(func(p statusProviders) { a.status = p.All }))
	a.Client = client.New(socket)
	t.Cleanup(a.Client.Close)
	return a
}

// Pod is an endpoint an apiary agent runs.
type Pod struct {
	Namespace, Name, ServiceAccount string
	IP                              netip.Addr
	Labels                          []string // "k8s:app=web"
	NamedPorts                      []policyapi.NamedPort
	EndpointID                      uint16
}

// AddPod allocates the pod's identity (published to etcd by the
// allocator) and upserts it as a local endpoint (published to etcd as
// Cilium's IPIdentityPair); it returns the identity.
func (a *ApiaryAgent) AddPod(t *testing.T, p Pod) identity.NumericIdentity {
	t.Helper()
	lbls := []labels.Label{
		labels.MustParse("k8s:io.kubernetes.pod.namespace=" + p.Namespace),
		labels.MustParse("k8s:io.cilium.k8s.policy.serviceaccount=" + p.ServiceAccount),
	}
	for _, l := range p.Labels {
		lbls = append(lbls, labels.MustParse(l))
	}
	id, _, err := a.Alloc.AllocateIdentity(t.Context(), labels.FromSlice(lbls))
	if err != nil {
		t.Fatalf("%s: allocate identity of %s/%s: %v", a.Name, p.Namespace, p.Name, err)
	}
	if _, err := a.IPC.UpsertLocalEndpoint(ipcache.LocalEndpoint{
		IP: p.IP, Identity: id.ID, EndpointID: p.EndpointID,
		K8sNamespace: p.Namespace, K8sPodName: p.Name, K8sServiceAccount: p.ServiceAccount, NamedPorts: p.NamedPorts,
	}); err != nil {
		t.Fatalf("%s: upsert endpoint %s/%s: %v", a.Name, p.Namespace, p.Name, err)
	}
	return id.ID
}

// ModuleHealth returns what module name (e.g. "clustermesh-publish")
// reports about itself, as `apiary hive` shows it.
func (a *ApiaryAgent) ModuleHealth(t *testing.T, name string) string {
	t.Helper()
	h, err := a.Client.Hive(t.Context())
	if err != nil {
		t.Fatalf("%s: GET hive: %v", a.Name, err)
	}
	var find func([]*models.Module) string
	find = func(ms []*models.Module) string {
		for _, m := range ms {
			if m.Name == name {
				return m.Message
			}
			if msg := find(m.Modules); msg != "" {
				return msg
			}
		}
		return ""
	}
	return find(h.Modules)
}
