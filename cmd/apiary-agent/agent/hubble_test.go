package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
)

// TestHubbleInTheAgent: the whole agent with --enable-hubble serves the
// Observer and Peer services (the node manager's local node listed) and
// reports a Hubble status line.
func TestHubbleInTheAgent(t *testing.T) {
	socket, flags := tempFlags(t)
	hubbleSock := filepath.Join(t.TempDir(), "hubble.sock")
	celltest.StartWithFlags(t, append(flags, "enable-hubble=true", "hubble-socket-path="+hubbleSock,
		"node-name=node-a", "node-ip=192.0.2.10", "cluster-name=c1", "cluster-id=1"), agent.Agent)
	conn, err := grpc.NewClient("unix://"+hubbleSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	st, err := observer.NewObserverClient(conn).ServerStatus(t.Context(), &observer.ServerStatusRequest{})
	if err != nil || st.GetMaxFlows() != 4095 {
		t.Fatalf("ServerStatus %v (%v), want max 4095", st, err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	n, err := peer.NewPeerClient(conn).Notify(ctx, &peer.NotifyRequest{})
	if err != nil {
		t.Fatal(err)
	}
	cn, err := n.Recv()
	if err != nil || cn.GetName() != "c1/node-a" || cn.GetAddress() != "192.0.2.10:4244" {
		t.Errorf("first peer %v (%v), want c1/node-a at 192.0.2.10:4244", cn, err)
	}
	c := client.New(socket)
	defer c.Close()
	celltest.Eventually(t, "the Hubble status line is Ok", func() bool {
		s, err := c.Status(t.Context())
		if err != nil {
			return false
		}
		for _, e := range s.Entries {
			if e.Name == "Hubble" {
				return e.State == status.Ok && strings.Contains(e.Message, "Current/Max Flows: 0/4095")
			}
		}
		return false
	})
}
