package monitorcell_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/loader/testpkt"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

// subscribe opens a monitor stream and waits for its first line.
func subscribe(t *testing.T, ctx context.Context, c *client.Client, types ...string) func() (models.MonitorMessage, error, bool) {
	t.Helper()
	next, stop := iterPull(c.Monitor(ctx, types...))
	t.Cleanup(stop)
	msg, err, ok := next()
	if err != nil || !ok || msg.Type != models.MonitorTypeSubscribed {
		t.Fatalf("first monitor line %+v (err %v, ok %v), want type subscribed", msg, err, ok)
	}
	return next
}

// TestMonitorStreamsDropAndVerdict runs real packets through the
// endpoint's programs and reads them back from GET /v1/monitor, with the
// labels of both identities.
func TestMonitorStreamsDropAndVerdict(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := subscribe(t, ctx, a.Client)
	drops := subscribe(t, ctx, a.Client, models.MonitorTypeDrop)

	if v := s.Ingress(t, s.AllowedTCP()); v != monitortest.ActOK {
		t.Fatalf("allowed flow: verdict %d", v)
	}
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}

	client, web := monitortest.Labels(s.Client), monitortest.Labels(s.Web)
	if !slices.Contains(client, "k8s:app=client") || !slices.Contains(web, "k8s:app=web") {
		t.Fatalf("identities allocated with labels %v and %v", client, web)
	}
	want := []struct {
		typ, verdict, reason, match string
		sport, dport                uint16
	}{
		{models.MonitorTypePolicyVerdict, "allow", "", "L3-L4", 40000, 80},
		{models.MonitorTypePolicyVerdict, "deny", "Policy denied", "none", 40001, 22},
		{models.MonitorTypeDrop, "", "Policy denied", "", 40001, 22},
	}
	for _, w := range want {
		msg, err, ok := next()
		if err != nil || !ok {
			t.Fatalf("stream ended before %s: %v", w.typ, err)
		}
		e := msg.MonitorEvent
		if msg.Type != w.typ || e == nil {
			t.Fatalf("got %+v, want a %s", msg, w.typ)
		}
		if e.Verdict != w.verdict || e.Reason != w.reason || e.Match != w.match || e.Direction != "ingress" ||
			e.EndpointID != s.EndpointID || e.Protocol != "TCP" {
			t.Errorf("%s event %+v, want verdict %q reason %q match %q ingress endpoint %d TCP",
				w.typ, e, w.verdict, w.reason, w.match, s.EndpointID)
		}
		src, dst := e.Source, e.Destination
		if src.Identity != uint32(s.Client.ID) || dst.Identity != uint32(s.Web.ID) ||
			!slices.Equal(src.Labels, client) || !slices.Equal(dst.Labels, web) {
			t.Errorf("%s identities %d %v -> %d %v, want %d %v -> %d %v", w.typ, src.Identity, src.Labels,
				dst.Identity, dst.Labels, s.Client.ID, client, s.Web.ID, web)
		}
		if src.IP != "10.0.1.1" || src.Port != w.sport || dst.IP != "10.0.0.7" || dst.Port != w.dport {
			t.Errorf("%s flow %s:%d -> %s:%d, want 10.0.1.1:%d -> 10.0.0.7:%d", w.typ, src.IP, src.Port, dst.IP, dst.Port, w.sport, w.dport)
		}
	}
	msg, err, _ := drops()
	if err != nil || msg.Type != models.MonitorTypeDrop || msg.Destination.Port != 22 {
		t.Errorf("?type=drop stream: first message %+v (err %v), want the drop only", msg, err)
	}
}

func TestMonitorBadType(t *testing.T) {
	a := monitortest.Start(t)
	for _, q := range []string{"?type=bogus", "?type=drop,bogus", "?type="} {
		_, err := a.Client.Get(context.Background(), "/v1/monitor"+q, nil)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /v1/monitor%s: %v, want 400", q, err)
			continue
		}
		if want := "query parameter type"; !contains(apiErr.Message, want) {
			t.Errorf("GET /v1/monitor%s: message %q does not name %q", q, apiErr.Message, want)
		}
	}
}

// TestMonitorEndsWithAgent: stopping the agent ends open streams
// cleanly (end of stream, no error) instead of holding the stop.
func TestMonitorEndsWithAgent(t *testing.T) {
	a := monitortest.Start(t)
	next := subscribe(t, context.Background(), a.Client)
	done := make(chan error, 1)
	go func() {
		_, err, ok := next()
		if ok && err == nil {
			err = errors.New("a message arrived instead of the end")
		}
		done <- err
	}()
	stopCtx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Hive.Stop(stopCtx); err != nil {
		t.Fatalf("stop with an open monitor stream: %v", err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stream end: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the stream did not end when the agent stopped")
	}
}

// TestMonitorICMP: ICMP events carry the type and no ports (the
// programs' echo id is not shown as a port).
func TestMonitorICMP(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	next := subscribe(t, ctx, a.Client, models.MonitorTypeDrop)
	echo := testpkt.Packet{Src: s.DBIP, Dst: s.WebIP, Proto: testpkt.ProtoICMP, ICMPType: 8, ICMPID: 77}
	if v := s.Ingress(t, echo); v != monitortest.ActShot {
		t.Fatalf("echo request from db: verdict %d, want dropped", v)
	}
	msg, err, ok := next()
	if err != nil || !ok || msg.MonitorEvent == nil {
		t.Fatalf("no drop: %+v %v", msg, err)
	}
	e := msg.MonitorEvent
	if e.Protocol != "ICMP" || e.ICMPType == nil || *e.ICMPType != 8 || e.Source.Port != 0 || e.Destination.Port != 0 ||
		e.Source.IP != "10.0.1.2" || e.Source.Identity != uint32(s.DB.ID) || e.Reason != "Policy denied by denylist" {
		t.Errorf("drop %+v, want ICMP type 8 from db (%d) without ports, denied by the deny entry", e, s.DB.ID)
	}
}
