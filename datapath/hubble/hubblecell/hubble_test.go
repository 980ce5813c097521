package hubblecell_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/api/peer"
	"github.com/apiary-net/apiary/datapath/hubble/hubbletest"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

// recv reads the next flow of a GetFlows stream.
func recv(t *testing.T, st observer.Observer_GetFlowsClient) *flow.Flow {
	t.Helper()
	for {
		resp, err := st.Recv()
		if err != nil {
			t.Fatalf("GetFlows: %v", err)
		}
		if f := resp.GetFlow(); f != nil {
			return f
		}
	}
}

// TestFlowsOfRealPackets runs an allowed and a denied connection through
// the endpoint's programs and reads them back as Hubble flows: the drop
// with POLICY_DENIED, the forwarded SYN, both ends named as pods.
func TestFlowsOfRealPackets(t *testing.T) {
	a := hubbletest.Start(t)
	s := a.NewScene(t)
	obs := observer.NewObserverClient(a.Dial(t))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if v := s.Ingress(t, s.AllowedTCP()); v != monitortest.ActOK {
		t.Fatalf("allowed flow: verdict %d", v)
	}
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}
	celltest.Eventually(t, "two flows in the ring", func() bool {
		st, err := obs.ServerStatus(ctx, &observer.ServerStatusRequest{})
		return err == nil && st.NumFlows == 2 && st.SeenFlows == 2 && st.MaxFlows == 4095
	})
	st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{Number: 10})
	if err != nil {
		t.Fatal(err)
	}
	fwd, drop := recv(t, st), recv(t, st)
	if _, err := st.Recv(); err != io.EOF {
		t.Errorf("after two flows: %v, want the end of the stream", err)
	}
	checkEnds := func(name string, f *flow.Flow, dport uint32) {
		t.Helper()
		src, dst := f.GetSource(), f.GetDestination()
		if src.GetPodName() != hubbletest.ClientPod || dst.GetPodName() != hubbletest.WebPod ||
			src.GetNamespace() != hubbletest.Namespace || dst.GetNamespace() != hubbletest.Namespace {
			t.Errorf("%s: pods %s/%s -> %s/%s", name, src.GetNamespace(), src.GetPodName(), dst.GetNamespace(), dst.GetPodName())
		}
		if src.GetIdentity() != uint32(s.Client.ID) || dst.GetIdentity() != uint32(s.Web.ID) ||
			!strings.Contains(strings.Join(dst.GetLabels(), ","), "k8s:app=web") {
			t.Errorf("%s: identities %d -> %d %v", name, src.GetIdentity(), dst.GetIdentity(), dst.GetLabels())
		}
		if f.GetIP().GetSource() != "10.0.1.1" || f.GetIP().GetDestination() != "10.0.0.7" ||
			f.GetL4().GetTCP().GetDestinationPort() != dport || f.GetTrafficDirection() != flow.TrafficDirection_INGRESS ||
			f.GetType() != flow.FlowType_L3_L4 || f.GetNodeName() != "c1/node-a" {
			t.Errorf("%s: %v", name, f)
		}
	}
	checkEnds("forwarded", fwd, 80)
	checkEnds("dropped", drop, 22)
	if fwd.GetVerdict() != flow.Verdict_FORWARDED || fwd.GetTraceObservationPoint() != flow.TraceObservationPoint_TO_ENDPOINT ||
		fwd.GetIsReply() == nil || fwd.GetIsReply().GetValue() || fwd.GetEventType().GetType() != 4 ||
		fwd.GetTraceReason() != flow.TraceReason_NEW || !fwd.GetL4().GetTCP().GetFlags().GetSYN() {
		t.Errorf("forwarded flow %v", fwd)
	}
	if drop.GetVerdict() != flow.Verdict_DROPPED || drop.GetDropReasonDesc() != flow.DropReason_POLICY_DENIED ||
		drop.GetEventType().GetType() != 1 || drop.GetEventType().GetSubType() != 133 {
		t.Errorf("dropped flow %v", drop)
	}

	t.Run("filters", func(t *testing.T) {
		st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{
			{SourcePod: []string{hubbletest.Namespace + "/client"}, Verdict: []flow.Verdict{flow.Verdict_DROPPED}, DestinationPort: []string{"22"}},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if f := recv(t, st); f.GetVerdict() != flow.Verdict_DROPPED {
			t.Errorf("filtered flow %v", f)
		}
		if _, err := st.Recv(); err != io.EOF {
			t.Errorf("after the drop: %v, want the end", err)
		}
		st, _ = obs.GetFlows(ctx, &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{{SourceIp: []string{"not-an-ip"}}}})
		if _, err := st.Recv(); err == nil || !strings.Contains(err.Error(), "source_ip") {
			t.Errorf("bad filter: %v, want an error naming source_ip", err)
		}
	})

	t.Run("follow", func(t *testing.T) {
		st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{Follow: true})
		if err != nil {
			t.Fatal(err)
		}
		// The server starts following when it handles the request, which
		// the client does not see: new connections are sent until one
		// arrives on the stream.
		got := make(chan *flow.Flow, 1)
		go func() {
			resp, err := st.Recv()
			if err == nil {
				got <- resp.GetFlow()
			}
			close(got)
		}()
		for i := uint16(0); ; i++ {
			p := s.AllowedTCP()
			p.Sport = 41000 + i
			if v := s.Ingress(t, p); v != monitortest.ActOK {
				t.Fatalf("verdict %d", v)
			}
			select {
			case f := <-got:
				if sp := f.GetL4().GetTCP().GetSourcePort(); sp < 41000 || sp > 41000+uint32(i) {
					t.Errorf("followed flow %v, want one of the new connections", f)
				}
				return
			case <-time.After(100 * time.Millisecond):
			case <-ctx.Done():
				t.Fatal("no flow followed")
			}
		}
	})

	t.Run("metrics", func(t *testing.T) {
		body := scrape(t, a.MetricsAddr)
		for _, want := range []string{
			`hubble_drop_total{protocol="TCP",reason="POLICY_DENIED"} 1`,
			`hubble_flows_processed_total{protocol="TCP",subtype="to-endpoint",type="Trace",verdict="FORWARDED"}`,
			`hubble_flows_processed_total{protocol="TCP",subtype="",type="Drop",verdict="DROPPED"} 1`,
			`hubble_tcp_flags_total{family="IPv4",flag="SYN"}`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("metrics lack %s:\n%s", want, body)
			}
		}
	})

	t.Run("peer", func(t *testing.T) {
		n, err := peer.NewPeerClient(a.Dial(t)).Notify(ctx, &peer.NotifyRequest{})
		if err != nil {
			t.Fatal(err)
		}
		cn, err := n.Recv()
		if err != nil || cn.GetName() != "c1/node-a" || cn.GetAddress() != "192.0.2.10:4244" || cn.GetType() != peer.ChangeNotificationType_PEER_ADDED {
			t.Errorf("peer notification %v (%v)", cn, err)
		}
	})
}

func scrape(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAggregation: at medium, an established packet without SYN, FIN or
// RST is not traced and a FIN is; at none every packet is.
func TestAggregation(t *testing.T) {
	for _, tc := range []struct {
		level   string
		wantAck bool
	}{{"medium", false}, {"none", true}} {
		t.Run(tc.level, func(t *testing.T) {
			a := hubbletest.Start(t, "monitor-aggregation="+tc.level)
			s := a.NewScene(t)
			obs := observer.NewObserverClient(a.Dial(t))
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			syn := s.AllowedTCP()
			ack, fin := syn, syn
			ack.TCPFlags, fin.TCPFlags = testpkt.ACK, testpkt.FIN|testpkt.ACK
			for _, p := range []testpkt.Packet{syn, ack, fin} {
				if v := s.Ingress(t, p); v != monitortest.ActOK {
					t.Fatalf("packet %+v: verdict %d", p, v)
				}
			}
			want := 2
			if tc.wantAck {
				want = 3
			}
			celltest.Eventually(t, "the traced packets in the ring", func() bool {
				st, err := obs.ServerStatus(ctx, &observer.ServerStatusRequest{})
				return err == nil && st.SeenFlows == uint64(want)
			})
			st, err := obs.GetFlows(ctx, &observer.GetFlowsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var reasons []flow.TraceReason
			for range want {
				reasons = append(reasons, recv(t, st).GetTraceReason())
			}
			if reasons[0] != flow.TraceReason_NEW || reasons[want-1] != flow.TraceReason_ESTABLISHED {
				t.Errorf("trace reasons %v, want NEW first and ESTABLISHED last", reasons)
			}
		})
	}
}

// TestAuditVerdict: a new flow the policy denies on an endpoint in
// --policy-audit-mode passes and is traced with verdict AUDIT.
func TestAuditVerdict(t *testing.T) {
	a := hubbletest.Start(t)
	s := a.NewScene(t)
	const auditEP = 8
	pm, err := a.Loader.PolicyMap(auditEP) // empty: every new flow is denied
	if err != nil {
		t.Fatal(err)
	}
	pm.Close()
	progs, err := a.Loader.Load(datapath.EndpointSpec{ID: auditEP, Identity: s.Web.ID, IngressEnforcement: true, EgressEnforcement: true, PolicyAudit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer progs.Close()
	ret, err := progs.ToContainer.Run(&ebpf.RunOptions{Data: s.DeniedTCP().MustFrame()})
	if err != nil || ret != monitortest.ActOK {
		t.Fatalf("denied flow in audit mode: verdict %d (%v), want passed", ret, err)
	}
	obs := observer.NewObserverClient(a.Dial(t))
	celltest.Eventually(t, "the audited flow in the ring", func() bool {
		st, err := obs.ServerStatus(t.Context(), &observer.ServerStatusRequest{})
		return err == nil && st.SeenFlows == 1
	})
	st, err := obs.GetFlows(t.Context(), &observer.GetFlowsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if f := recv(t, st); f.GetVerdict() != flow.Verdict_AUDIT || f.GetDestination().GetPodName() != hubbletest.WebPod ||
		f.GetL4().GetTCP().GetDestinationPort() != 22 {
		t.Errorf("audited flow %v", f)
	}
}

// TestRingBufferLossIsReported: a burst of events larger than the
// datapath's ring buffer loses records; the programs count them and the
// observer reports them as LostEvent PERF_EVENT_RING_BUFFER, so that
// flows and losses add up to the events written.
func TestRingBufferLossIsReported(t *testing.T) {
	a := hubbletest.Start(t, "hubble-event-buffer-capacity=32767")
	s := a.NewScene(t)
	const burst = 20000 // about five times what the 256 KiB ring holds
	ret, err := s.Programs.ToContainer.Run(&ebpf.RunOptions{Data: s.DeniedTCP().MustFrame(), Repeat: burst})
	if err != nil || ret != monitortest.ActShot {
		t.Fatalf("burst of denied packets: %d (%v)", ret, err)
	}
	obs := observer.NewObserverClient(a.Dial(t))
	var flows, kernelLost, queueLost uint64
	celltest.Eventually(t, "flows and lost events add up to the burst", func() bool {
		st, err := obs.GetFlows(t.Context(), &observer.GetFlowsRequest{})
		if err != nil {
			return false
		}
		flows, kernelLost, queueLost = 0, 0, 0
		for {
			resp, err := st.Recv()
			if err != nil {
				break
			}
			switch l := resp.GetLostEvents(); {
			case resp.GetFlow() != nil:
				flows++
			case l.GetSource() == flow.LostEventSource_PERF_EVENT_RING_BUFFER:
				kernelLost += l.GetNumEventsLost()
			case l.GetSource() == flow.LostEventSource_OBSERVER_EVENTS_QUEUE:
				queueLost += l.GetNumEventsLost()
			}
		}
		return flows+kernelLost+queueLost == burst
	})
	if kernelLost == 0 || flows == 0 {
		t.Errorf("%d flows, %d lost in the ring buffer, %d in the queue: want losses in the ring buffer", flows, kernelLost, queueLost)
	}
	t.Logf("%d flows, %d lost in the ring buffer, %d in the observer's queue", flows, kernelLost, queueLost)
}

// TestPolicyMetric: --hubble-metrics policy subscribes to policy
// verdicts and counts them in hubble_policy_verdicts_total with Cilium's
// labels; the verdicts are flows too.
func TestPolicyMetric(t *testing.T) {
	a := hubbletest.Start(t, "hubble-metrics=policy")
	s := a.NewScene(t)
	s.Ingress(t, s.AllowedTCP())
	s.Ingress(t, s.DeniedTCP())
	want := []string{
		`hubble_policy_verdicts_total{action="forwarded",direction="ingress",match="l3-l4"} 1`,
		`hubble_policy_verdicts_total{action="dropped",direction="ingress",match="none"} 1`,
	}
	celltest.Eventually(t, "both verdicts counted", func() bool {
		body := scrape(t, a.MetricsAddr)
		return strings.Contains(body, want[0]) && strings.Contains(body, want[1])
	})
	obs := observer.NewObserverClient(a.Dial(t))
	st, err := obs.GetFlows(t.Context(), &observer.GetFlowsRequest{Whitelist: []*flow.FlowFilter{
		{EventType: []*flow.EventTypeFilter{{Type: 5}}, Verdict: []flow.Verdict{flow.Verdict_DROPPED}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if f := recv(t, st); f.GetDropReasonDesc() != flow.DropReason_POLICY_DENIED || f.GetPolicyMatchType() != 0 ||
		f.GetL4().GetTCP().GetDestinationPort() != 22 || f.GetIsReply().GetValue() {
		t.Errorf("denied verdict flow %v", f)
	}
}
