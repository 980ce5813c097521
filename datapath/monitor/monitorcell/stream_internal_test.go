package monitorcell

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/maps/eventsmap"
	"github.com/apiary-net/apiary/datapath/monitor"
)

// pipeWriter is a streaming http.ResponseWriter whose body a test reads
// line by line as the handler flushes it.
type pipeWriter struct {
	header http.Header
	w      *io.PipeWriter
}

func (p *pipeWriter) Header() http.Header         { return p.header }
func (p *pipeWriter) WriteHeader(int)             {}
func (p *pipeWriter) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeWriter) Flush()                      {}

// TestStreamTellsSlowClientHowManyLost: events that overflowed a
// subscriber's buffer are reported as one "lost" line before the events
// that were kept.
func TestStreamTellsSlowClientHowManyLost(t *testing.T) {
	m := monitor.New()
	sub, err := m.Subscribe(monitor.AllTypes, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for i := range uint32(5) {
		m.Publish(monitor.Event{Event: eventsmap.Event{Type: eventsmap.TypeDrop, Reason: eventsmap.ReasonPolicy, Len: i}})
	}
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, "/v1/monitor", nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		stream(&pipeWriter{header: http.Header{}, w: pw}, req, sub)
	}()
	lines := bufio.NewScanner(pr)
	var got []models.MonitorMessage
	for len(got) < 4 && lines.Scan() {
		var msg models.MonitorMessage
		if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
			t.Fatalf("line %q: %v", lines.Text(), err)
		}
		got = append(got, msg)
	}
	cancel()
	go io.Copy(io.Discard, pr) // let a write in flight finish
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("stream did not return when the client went")
	}
	pr.Close()
	if len(got) != 4 {
		t.Fatalf("got %d lines, want 4", len(got))
	}
	if got[0].Type != models.MonitorTypeSubscribed {
		t.Errorf("first line %+v, want subscribed", got[0])
	}
	if got[1].Type != models.MonitorTypeLost || got[1].Lost != 3 {
		t.Errorf("second line %+v, want lost 3", got[1])
	}
	for i, msg := range got[2:] {
		if msg.Type != models.MonitorTypeDrop || msg.MonitorEvent == nil || msg.Length != uint32(i) || msg.Reason != "Policy denied" {
			t.Errorf("line %d: %+v, want the drop of length %d", i+3, msg, i)
		}
	}
}

// TestClientGoneUnsubscribes: a client that disconnects leaves no
// subscription behind.
func TestClientGoneUnsubscribes(t *testing.T) {
	m := monitor.New()
	srv := httptest.NewServer(newMonitorHandler(&service{m: m}).Handler.Handler)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"?type=drop", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || m.Subscribers() != 1 {
		t.Fatalf("first line %q (err %v), %d subscribers; want subscribed, 1", line, err, m.Subscribers())
	}
	cancel()
	resp.Body.Close()
	celltest.Eventually(t, "the subscription closes after the client went", func() bool { return m.Subscribers() == 0 })
}

func TestMetrics(t *testing.T) {
	m := monitor.New()
	sub, _ := m.Subscribe(monitor.AllTypes, 1)
	defer sub.Close()
	m.Publish(monitor.Event{Event: eventsmap.Event{Type: eventsmap.TypeDrop}})
	m.Publish(monitor.Event{Event: eventsmap.Event{Type: eventsmap.TypeDrop}})
	m.Publish(monitor.Event{Event: eventsmap.Event{Type: eventsmap.TypePolicyVerdict}})
	out := newMetricsOut(&service{m: m})
	want := `
# HELP apiary_monitor_events_lost_total Datapath events dropped for monitor clients that read too slowly (one per client)
# TYPE apiary_monitor_events_lost_total counter
apiary_monitor_events_lost_total 2
# HELP apiary_monitor_events_total Datapath events read from the events ring buffer, by type (drop, policy-verdict, trace)
# TYPE apiary_monitor_events_total counter
apiary_monitor_events_total{type="drop"} 2
apiary_monitor_events_total{type="policy-verdict"} 1
apiary_monitor_events_total{type="trace"} 0
# HELP apiary_monitor_subscribers Open GET /v1/monitor streams
# TYPE apiary_monitor_subscribers gauge
apiary_monitor_subscribers 1
`
	if err := testutil.CollectAndCompare(out.Collector, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
