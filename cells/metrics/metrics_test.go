package metrics_test

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/hive"
	"github.com/apiary-net/apiary/cells/metrics"
	"github.com/apiary-net/apiary/cells/status"
)

func newTestCounter() prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: "apiary_test_events_total", Help: "Test events."})
}

// provideCounter returns a constructor that registers c.
func provideCounter(c prometheus.Counter) func() metrics.Out {
	return func() metrics.Out { return metrics.Out{Collector: c} }
}

func scrape(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("scrape %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func statusEntry(t *testing.T, c status.Collector, name string) (status.State, string) {
	t.Helper()
	for _, e := range c.Status().Entries {
		if e.Name == name {
			return e.State, e.Message
		}
	}
	t.Fatalf("no status entry %q", name)
	return "", ""
}

func TestServeMetrics(t *testing.T) {
	var srv metrics.Server
	var c status.Collector
	testCounter := newTestCounter()
	celltest.StartWithFlags(t, []string{"prometheus-serve-addr=127.0.0.1:0"},
		metrics.Cell, status.Cell, cell.Provide(provideCounter(testCounter)),
		celltest.Capture(&srv), celltest.Capture(&c))
	addr := srv.Addr()
	if _, port, _ := net.SplitHostPort(addr); port == "" || port == "0" {
		t.Fatalf("Addr() = %q, want the real port", addr)
	}
	testCounter.Add(3)
	code, body := scrape(t, addr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, want := range []string{
		`^go_goroutines [0-9]+`,
		`^process_cpu_seconds_total [0-9.e+-]+`,
		`^apiary_test_events_total 3$`,
		`^apiary_agent_bootstrap_seconds\{phase="populate"\} [0-9.e+-]+$`,
		`^apiary_agent_bootstrap_seconds\{phase="start"\} [0-9.e+-]+$`,
		`^apiary_agent_bootstrap_seconds\{phase="overall"\} [0-9.e+-]+$`,
	} {
		if !regexp.MustCompile(`(?m)` + want).MatchString(body) {
			t.Errorf("/metrics has no line matching %s", want)
		}
	}
	if code, _ := scrape(t, addr, "/other"); code != http.StatusNotFound {
		t.Errorf("GET /other = %d, want 404", code)
	}
	if state, msg := statusEntry(t, c, "Metrics"); state != status.Ok || msg != "serving /metrics on "+addr {
		t.Errorf("Metrics status = %s %q, want Ok serving on %s", state, msg, addr)
	}
}

func TestDisabled(t *testing.T) {
	var srv metrics.Server
	var reg metrics.Registry
	var c status.Collector
	celltest.Start(t, metrics.Cell, status.Cell, celltest.Capture(&srv), celltest.Capture(&reg), celltest.Capture(&c))
	if srv.Addr() != "" {
		t.Errorf("Addr() = %q, want empty when disabled", srv.Addr())
	}
	if state, msg := statusEntry(t, c, "Metrics"); state != status.Disabled || msg != "--prometheus-serve-addr is empty" {
		t.Errorf("Metrics status = %s %q, want Disabled", state, msg)
	}
	// The registry still works for cells and tests.
	families, err := reg.Gather()
	if err != nil || len(families) == 0 {
		t.Errorf("Gather() = %d families, %v", len(families), err)
	}
}

func TestStartFailsWhenPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var srv metrics.Server
	h := celltest.New(t, []string{"prometheus-serve-addr=" + l.Addr().String()}, metrics.Cell, celltest.Capture(&srv))
	err = h.Start(t.Context())
	if err == nil || !strings.Contains(err.Error(), "listen on --prometheus-serve-addr") ||
		!strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Start = %v, want address already in use", err)
	}
}

func TestInvalidConfig(t *testing.T) {
	tests := []struct {
		name  string
		give  string
		extra []cell.Cell
		want  string
	}{
		{name: "no port", give: "127.0.0.1", want: "--prometheus-serve-addr: address 127.0.0.1: missing port in address"},
		{name: "bad port", give: ":http", want: `--prometheus-serve-addr: port "http" is not a number`},
		{name: "port too large", give: ":70000", want: `port "70000" is not a number between 0 and 65535`},
		{name: "duplicate collector", give: "", extra: []cell.Cell{cell.Provide(provideCounter(newTestCounter())),
			cell.Module("again", "Registers the counter again", cell.Provide(provideCounter(newTestCounter())))},
			want: "register metrics collector *prometheus.counter: duplicate metrics collector registration attempted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv metrics.Server
			cells := append([]cell.Cell{metrics.Cell, celltest.Capture(&srv)}, tt.extra...)
			h := hive.NewWithOptions(hive.Options{Logger: celltest.Logger(t)}, cells...)
			if err := celltest.SetFlags(h.Flags(), []string{"prometheus-serve-addr=" + tt.give}); err != nil {
				t.Fatal(err)
			}
			if err := h.Populate(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Populate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
