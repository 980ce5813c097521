package agent_test

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
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

const bFromAOn8080 = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-from-a, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// TestHubbleFlowsOfRealTraffic: real TCP connections between two pods'
// network namespaces through the whole agent become Hubble flows with
// both pod names and endpoint ids: the allowed connection forwarded
// (SYN to the endpoint, SYN-ACK as a reply), the denied one dropped with
// POLICY_DENIED and its port.
func TestHubbleFlowsOfRealTraffic(t *testing.T) {
	n := newNodeA(t)
	if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(bFromAOn8080), 0o600); err != nil {
		t.Fatal(err)
	}
	hubbleSock := filepath.Join(t.TempDir(), "hubble.sock")
	c, _ := startNode(t, n, nil, "enable-hubble=true", "hubble-socket-path="+hubbleSock)
	pods := map[string]string{"a": netnstest.New(t, "apiary-pod"), "b": netnstest.New(t, "apiary-pod")}
	create := func(id uint16, app string) {
		t.Helper()
		_, err := c.EndpointPut(t.Context(), id, models.EndpointRequest{NetNSPath: pods[app],
			Labels: []string{"app=" + app, "io.kubernetes.pod.namespace=default"}, PodNamespace: "default", PodName: app + "-0"})
		if err != nil {
			t.Fatal(err)
		}
	}
	conn, err := grpc.NewClient("unix://"+hubbleSock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	obs := observer.NewObserverClient(conn)
	find := func(what string, match func(*flow.Flow) bool) *flow.Flow {
		t.Helper()
		var found *flow.Flow
		celltest.Eventually(t, what, func() bool {
			st, err := obs.GetFlows(t.Context(), &observer.GetFlowsRequest{})
			if err != nil {
				return false
			}
			for {
				resp, err := st.Recv()
				if err != nil {
					return false
				}
				if f := resp.GetFlow(); f != nil && match(f) {
					found = f
					return true
				}
			}
		})
		return found
	}
	// a's flows first, to an address no endpoint has: Hubble then knows
	// the node's endpoints without b; b's flows right after its creation
	// must still name it by its endpoint id.
	create(1, "a")
	waitEndpointReady(t, c, 1)
	nowhere := netip.MustParseAddr("192.0.2.99")
	_ = netnstest.Dial(pods["a"], nowhere, 9, denyTimeout) // nothing answers there
	find("a flow of a-0 before b exists", func(f *flow.Flow) bool {
		return f.GetSource().GetPodName() == "a-0" && f.GetIP().GetDestination() == nowhere.String()
	})
	create(2, "b")
	ipB := addrOf(t, waitEndpointReady(t, c, 2))
	serve(t, pods["b"], ipB, 8080, 9090)
	wantTCP(t, pods["a"], ipB, 8080, true)
	wantTCP(t, pods["a"], ipB, 9090, false)

	aToB := func(f *flow.Flow) bool {
		return f.GetSource().GetPodName() == "a-0" && f.GetDestination().GetPodName() == "b-0" &&
			f.GetSource().GetNamespace() == "default" && f.GetDestination().GetID() == 2
	}
	drop := find("the drop a->b:9090", func(f *flow.Flow) bool {
		return f.GetVerdict() == flow.Verdict_DROPPED && f.GetL4().GetTCP().GetDestinationPort() == 9090
	})
	if drop.GetDropReasonDesc() != flow.DropReason_POLICY_DENIED || !aToB(drop) || drop.GetTrafficDirection() != flow.TrafficDirection_INGRESS {
		t.Errorf("drop %v", drop)
	}
	syn := find("the forwarded SYN a->b:8080 into b", func(f *flow.Flow) bool {
		return f.GetVerdict() == flow.Verdict_FORWARDED && f.GetL4().GetTCP().GetDestinationPort() == 8080 &&
			f.GetTraceObservationPoint() == flow.TraceObservationPoint_TO_ENDPOINT
	})
	if !aToB(syn) || syn.GetIsReply().GetValue() || syn.GetTraceReason() != flow.TraceReason_NEW {
		t.Errorf("forwarded SYN %v", syn)
	}
	reply := find("the SYN-ACK b->a as a reply", func(f *flow.Flow) bool {
		return f.GetIsReply().GetValue() && f.GetL4().GetTCP().GetSourcePort() == 8080 && f.GetL4().GetTCP().GetFlags().GetSYN()
	})
	if reply.GetSource().GetPodName() != "b-0" || reply.GetDestination().GetPodName() != "a-0" {
		t.Errorf("reply %v", reply)
	}
}
