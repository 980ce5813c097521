package hubbletest

import (
	"context"
	"net"
	"net/netip"
	"path/filepath"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/hubble/hubblecell"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/ipcache/ipcachecell"
	"github.com/apiary-net/apiary/policy/source"
)

// Namespace is the scene's pods' namespace.
const Namespace = "shop"

// Pod names of the scene's peers.
const (
	WebPod    = "web-0"
	ClientPod = "client-5d8f9"
	DBPod     = "db-0"
)

// Agent is a running agent with Hubble on Socket.
type Agent struct {
	*monitortest.Agent
	// Socket is the Hubble API's unix socket.
	Socket string
	// MetricsAddr is --hubble-metrics-server.
	MetricsAddr string
	IPCache     ipcache.IPCache
}

// Start starts the agent with Hubble enabled and the flow, drop and tcp
// metrics on a free port; flags add to or override the defaults
// ("name=value"). It skips the test when BPF programs cannot be loaded.
func Start(t testing.TB, flags ...string) *Agent {
	t.Helper()
	return StartWith(t, flags)
}

// StartWith is Start with more cells (a benchmark captures the metrics).
func StartWith(t testing.TB, flags []string, extra ...cell.Cell) *Agent {
	t.Helper()
	a := &Agent{Socket: filepath.Join(t.TempDir(), "hubble.sock"), MetricsAddr: freePort(t)}
	all := append([]string{"enable-hubble=true", "hubble-socket-path=" + a.Socket,
		"hubble-metrics-server=" + a.MetricsAddr, "hubble-metrics=drop,flow,tcp"}, flags...)
	a.Agent = monitortest.StartWith(t, all, append([]cell.Cell{ipcachecell.Cell, hubblecell.Cell, celltest.Capture(&a.IPCache)}, extra...)...)
	return a
}

func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// NewScene is monitortest's scene (web 10.0.0.7 lets client 10.0.1.1
// in on TCP 80, denies db 10.0.1.2), its three addresses named as pods
// of Namespace in the ipcache.
func (a *Agent) NewScene(t testing.TB) *monitortest.Scene {
	t.Helper()
	s := a.Agent.NewScene(t)
	var rev ipcache.Revision
	for _, p := range []struct {
		ip  netip.Addr
		id  *identity.Identity
		pod string
	}{{s.WebIP, s.Web, WebPod}, {s.ClientIP, s.Client, ClientPod}, {s.DBIP, s.DB, DBPod}} {
		var err error
		rev, err = a.IPCache.UpsertMetadata(netip.PrefixFrom(p.ip, 32), source.KVStore, ipcache.ResourceID("pod/"+p.pod),
			ipcache.Metadata{Identity: p.id.ID, K8sNamespace: Namespace, K8sPodName: p.pod})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := a.IPCache.WaitForRevision(context.Background(), rev); err != nil {
		t.Fatal(err)
	}
	return s
}

// Dial connects a gRPC client to the Hubble socket.
func (a *Agent) Dial(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+a.Socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}
