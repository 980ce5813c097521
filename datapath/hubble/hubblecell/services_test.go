package hubblecell_test

import (
	"context"
	"io"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/hubbletest"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagercell"
)

// clientService is a ClusterIP service whose one backend is the scene's
// client pod (10.0.1.1:8080).
const clientService = `services:
- metadata: {name: api, namespace: shop}
  spec:
    clusterIP: 10.96.0.20
    ports: [{port: 80, targetPort: 8080}]
endpoints:
- metadata: {name: api-1, namespace: shop, labels: {kubernetes.io/service-name: api}}
  addressType: IPv4
  ports: [{port: 8080}]
  endpoints:
  - addresses: [10.0.1.1]
`

// TestFlowsOfServices runs a connection of the web pod to a ClusterIP
// through its programs (balanced to the client pod) and the backend's
// answer back: the request is a flow to the service
// (destination_service), the answer one from it (source_service), named
// by the rev-NAT index the datapath's events carry; hubble observe
// --to-service and --from-service select them, --to-service another
// service's flows none, and a filter on a field apiary's flows lack is
// refused naming it.
func TestFlowsOfServices(t *testing.T) {
	file := filepath.Join(t.TempDir(), "lb.yaml")
	celltest.ReplaceFile(t, file, clientService)
	var m *svcmanager.Manager
	a := hubbletest.StartWith(t, []string{"lb-state-file=" + file}, svcmanagercell.Cell, celltest.Capture(&m))
	s := a.NewScene(t)
	frontend := datapath.L3n4Addr{Addr: netip.MustParseAddr("10.96.0.20"), Port: 80, Proto: datapath.ProtoTCP}
	celltest.Eventually(t, "the service's frontend", func() bool { _, _, ok := m.ServiceAt(frontend); return ok })

	out := testpkt.Packet{Src: s.WebIP, Dst: frontend.Addr, Proto: testpkt.ProtoTCP, Sport: 43000, Dport: 80}
	if _, err := s.Programs.FromContainer.Run(&ebpf.RunOptions{Data: out.MustFrame()}); err != nil {
		t.Fatal(err)
	}
	back := testpkt.Packet{Src: s.ClientIP, Dst: s.WebIP, Proto: testpkt.ProtoTCP, Sport: 8080, Dport: 43000, TCPFlags: 0x12}
	s.Ingress(t, back)

	obs := observer.NewObserverClient(a.Dial(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// first returns the first flow the filter selects, nil if none.
	first := func(ff *flow.FlowFilter) *flow.Flow {
		st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{ff}})
		if err != nil {
			return nil
		}
		resp, err := st.Recv()
		if err != nil {
			return nil
		}
		return resp.GetFlow()
	}
	var req, answer *flow.Flow
	celltest.Eventually(t, "the connection and its answer as flows of the service", func() bool {
		req, answer = first(&flow.FlowFilter{DestinationService: []string{"shop/api"}}), first(&flow.FlowFilter{SourceService: []string{"shop/"}})
		return req != nil && answer != nil
	})
	// The flows show the packets as the endpoint's programs pass them:
	// the request to the backend, the answer from it, not yet rewritten
	// back to the frontend.
	if req.GetDestinationService().GetName() != "api" || req.GetSourceService() != nil || req.GetIP().GetDestination() != "10.0.1.1" ||
		req.GetL4().GetTCP().GetDestinationPort() != 8080 || req.GetDestination().GetPodName() != hubbletest.ClientPod || req.GetIsReply().GetValue() {
		t.Errorf("the request's flow %v", req)
	}
	if answer.GetSourceService().GetNamespace() != "shop" || answer.GetSourceService().GetName() != "api" || answer.GetDestinationService() != nil ||
		answer.GetIP().GetSource() != "10.0.1.1" || answer.GetL4().GetTCP().GetSourcePort() != 8080 || !answer.GetIsReply().GetValue() {
		t.Errorf("the answer's flow %v", answer)
	}
	st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{{DestinationService: []string{"shop/other"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Errorf("flows to another service: %v, want none", err)
	}
	st, err = obs.GetFlows(ctx, &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{{HttpStatusCode: []string{"200"}}}})
	if err == nil {
		_, err = st.Recv()
	}
	if err == nil || !strings.Contains(err.Error(), "http_status_code") {
		t.Errorf("a filter on HTTP status codes: %v, want it refused naming the field", err)
	}
}
