package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/maps/lbmap"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

// TestBPFCommands prints the maps after real traffic through the
// endpoint's programs.
func TestBPFCommands(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	s.Ingress(t, s.AllowedTCP())
	s.Ingress(t, s.DeniedTCP())
	client, db := monitortest.Labels(s.Client), monitortest.Labels(s.DB)

	code, out, errOut := run(t, a.Socket, "bpf", "policy", "get", "7")
	if code != 0 {
		t.Fatalf("bpf policy get: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	wantPrefixes := []string{
		"POLICY   DIRECTION   LABELS (IDENTITY)",
		fmt.Sprintf("Allow    Ingress     %s (%d)", client[0], s.Client.ID),
	}
	for i, w := range wantPrefixes {
		if i >= len(lines) || !strings.HasPrefix(lines[i], w) {
			t.Errorf("bpf policy get line %d: want prefix %q\n%s", i, w, out)
		}
	}
	for _, want := range []string{"80/TCP", "8080-8087/TCP", "8/ICMP", fmt.Sprintf("%s (%d)", db[0], s.DB.ID), client[1]} {
		if !strings.Contains(out, want) {
			t.Errorf("bpf policy get does not show %q:\n%s", want, out)
		}
	}
	if !lineWith(out, "Deny", "Ingress", fmt.Sprintf("(%d)", s.DB.ID), "ANY") || !lineWith(out, "Allow", "Egress", "ANY", "ANY") {
		t.Errorf("bpf policy get lacks the deny of db or the egress allow-all:\n%s", out)
	}
	if !lineWith(out, "Allow", "Ingress", "80/TCP", " 1") {
		t.Errorf("bpf policy get: the allowed flow's entry does not count 1 packet:\n%s", out)
	}

	t.Logf("apiary bpf policy get 7:\n%s", out)
	code, out, errOut = run(t, a.Socket, "bpf", "policy", "get", "99")
	if code == 0 || !strings.Contains(errOut, "404") || !strings.Contains(errOut, "endpoint 99") {
		t.Errorf("bpf policy get 99: exit %d, stderr %q; want a 404 naming endpoint 99", code, errOut)
	}

	code, out, errOut = run(t, a.Socket, "bpf", "ct", "list")
	if code != 0 || !lineWith(out, "TCP", "10.0.1.1:40000", "10.0.0.7:80", "ingress", "7", fmt.Sprint(s.Client.ID), " 1 ", "SYN") ||
		!strings.HasPrefix(out, "PROTO") || !lineWith(out, "EXPIRES", "TX PACKETS", "TX BYTES", "RX PACKETS", "RX BYTES", "POLICY REV", "TCP FLAGS") {
		t.Errorf("bpf ct list: exit %d (%s), want the allowed flow:\n%s", code, errOut, out)
	}
	t.Logf("apiary bpf ct list:\n%s", out)
	code, out, errOut = run(t, a.Socket, "bpf", "metrics")
	if code != 0 || !strings.HasPrefix(out, "REASON") || !lineWith(out, "Policy denied", "ingress", " 1 ") {
		t.Errorf("bpf metrics: exit %d (%s), want one ingress packet dropped for Policy denied:\n%s", code, errOut, out)
	}
	t.Logf("apiary bpf metrics:\n%s", out)
	code, out, errOut = run(t, a.Socket, "bpf", "ipcache", "list")
	if code != 0 || !strings.HasPrefix(out, "PREFIX ") || !lineWith(out, "PREFIX", "IDENTITY", "TUNNEL/HOST", "ENCRYPT KEY") || !lineWith(out, "10.0.1.2/32", fmt.Sprint(s.DB.ID)) {
		t.Errorf("bpf ipcache list: exit %d (%s):\n%s", code, errOut, out)
	}
	code, out, errOut = run(t, a.Socket, "bpf", "lb", "list")
	if code != 0 || strings.TrimSpace(out) != "SERVICE ADDRESS   BACKEND ADDRESS (REVNAT_ID) (SLOT)" {
		t.Errorf("bpf lb list without services: exit %d (%s):\n%s", code, errOut, out)
	}
	lbw, err := lbmap.OpenWriter(slog.New(slog.NewTextHandler(io.Discard, nil)), a.Root)
	if err != nil {
		t.Fatal(err)
	}
	defer lbw.Close()
	l3n4 := func(s string) datapath.L3n4Addr {
		ap := netip.MustParseAddrPort(s)
		return datapath.L3n4Addr{Addr: ap.Addr(), Port: ap.Port(), Proto: datapath.ProtoTCP}
	}
	if err := lbw.UpsertService(datapath.LBService{Frontend: l3n4("10.96.0.10:80"), Backends: []datapath.LBBackend{
		{Addr: l3n4("10.0.1.1:8080")}, {Addr: l3n4("10.0.1.2:8080")}}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, a.Socket, "bpf", "lb", "list")
	wantLB := []string{
		"SERVICE ADDRESS     BACKEND ADDRESS (REVNAT_ID) (SLOT)",
		"10.96.0.10:80/TCP   0.0.0.0:0 (1) (0) [ClusterIP, non-routable]",
		"                    10.0.1.1:8080/TCP (1) (1)",
		"                    10.0.1.2:8080/TCP (1) (2)",
	}
	if code != 0 || strings.TrimRight(out, "\n") != strings.Join(wantLB, "\n") {
		t.Errorf("bpf lb list: exit %d (%s):\n%s\nwant:\n%s", code, errOut, out, strings.Join(wantLB, "\n"))
	}
	// A LoadBalancer frontend with source ranges shows them under its
	// master entry.
	if err := lbw.UpsertService(datapath.LBService{Frontend: l3n4("192.0.2.100:80"), Type: datapath.SVCTypeLoadBalancer,
		SourceRanges: []netip.Prefix{netip.MustParsePrefix("172.16.0.0/12"), netip.MustParsePrefix("10.0.0.0/8")},
		Backends:     []datapath.LBBackend{{Addr: l3n4("10.0.1.1:8080")}}}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, a.Socket, "bpf", "lb", "list")
	if code != 0 || !lineWith(out, "192.0.2.100:80/TCP", "0.0.0.0:0 (2) (0) [LoadBalancer, sourceRange]") ||
		!lineWith(out, "source ranges: 10.0.0.0/8, 172.16.0.0/12") {
		t.Errorf("bpf lb list with source ranges: exit %d (%s):\n%s", code, errOut, out)
	}
	code, out, _ = run(t, a.Socket, "bpf", "ipcache", "list", "-o", "json")
	var items []models.BPFIPCacheEntry
	if err := json.Unmarshal([]byte(out), &items); code != 0 || err != nil || len(items) != 3 {
		t.Errorf("bpf ipcache list -o json: exit %d, %v, %d items:\n%s", code, err, len(items), out)
	}
}

// lineWith reports whether a line of out holds every part, in order.
func lineWith(out string, parts ...string) bool {
	for _, line := range strings.Split(out, "\n") {
		rest, ok := line, true
		for _, p := range parts {
			i := strings.Index(rest, p)
			if i < 0 {
				ok = false
				break
			}
			rest = rest[i+len(p):]
		}
		if ok {
			return true
		}
	}
	return false
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// monitorRun is `apiary monitor` running until stopped.
type monitorRun struct {
	out, errOut syncBuffer
	cancel      context.CancelFunc
	code        chan int
}

func startMonitor(t *testing.T, socket string, args ...string) *monitorRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &monitorRun{cancel: cancel, code: make(chan int, 1)}
	go func() {
		m.code <- cli.Execute(ctx, append([]string{"--socket", socket, "monitor"}, args...), &m.out, &m.errOut)
	}()
	t.Cleanup(func() { m.stop(t) })
	celltest.Eventually(t, "apiary monitor subscribed", func() bool { return strings.Contains(m.errOut.String(), "Listening for events") })
	return m
}

// stop interrupts the monitor and returns its exit code.
func (m *monitorRun) stop(t *testing.T) int {
	m.cancel()
	select {
	case c := <-m.code:
		m.code <- c
		return c
	case <-time.After(10 * time.Second):
		t.Fatal("apiary monitor did not stop when interrupted")
	}
	return -1
}

func TestMonitorCommand(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	all := startMonitor(t, a.Socket)
	drops := startMonitor(t, a.Socket, "--type", "drop", "-o", "json")
	s.Ingress(t, s.AllowedTCP())
	s.Ingress(t, s.DeniedTCP())

	client, web := strings.Join(monitortest.Labels(s.Client), ","), strings.Join(monitortest.Labels(s.Web), ",")
	ids := fmt.Sprintf("identity %d->%d", s.Client.ID, s.Web.ID)
	labels := fmt.Sprintf("labels [%s] -> [%s]", client, web)
	want := []string{
		fmt.Sprintf("-> policy-verdict allow (match L3-L4) ingress endpoint 7, %s: 10.0.1.1:40000 -> 10.0.0.7:80 TCP [SYN], %s", ids, labels),
		fmt.Sprintf("xx policy-verdict deny (match none, Policy denied) ingress endpoint 7, %s: 10.0.1.1:40001 -> 10.0.0.7:22 TCP [SYN], %s", ids, labels),
		fmt.Sprintf("xx drop (Policy denied) ingress endpoint 7, %s: 10.0.1.1:40001 -> 10.0.0.7:22 TCP [SYN], %s", ids, labels),
	}
	celltest.Eventually(t, "apiary monitor prints three events", func() bool { return strings.Count(all.out.String(), "\n") >= 3 })
	celltest.Eventually(t, "apiary monitor --type drop prints the drop", func() bool { return strings.Count(drops.out.String(), "\n") >= 1 })
	if code := all.stop(t); code != 0 {
		t.Errorf("apiary monitor exit %d after interrupt: %s", code, all.errOut.String())
	}
	if got := strings.Split(strings.TrimSpace(all.out.String()), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("apiary monitor printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	drops.stop(t)
	var msg models.MonitorMessage
	lines := strings.Split(strings.TrimSpace(drops.out.String()), "\n")
	if err := json.Unmarshal([]byte(lines[0]), &msg); err != nil || len(lines) != 1 || msg.Type != "drop" ||
		msg.Source.Identity != uint32(s.Client.ID) || len(msg.Destination.Labels) == 0 {
		t.Errorf("apiary monitor --type drop -o json printed %q (err %v), want the one drop with labels", drops.out.String(), err)
	}
}

func TestMonitorBadType(t *testing.T) {
	code, _, errOut := run(t, "/nonexistent.sock", "monitor", "--type", "l7")
	if code == 0 || !strings.Contains(errOut, "--type") {
		t.Errorf("apiary monitor --type l7: exit %d, stderr %q; want an error naming --type", code, errOut)
	}
}

// TestMonitorTrace: --type trace switches the programs' trace events on
// and prints the forwarded packets.
func TestMonitorTrace(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	m := startMonitor(t, a.Socket, "--type", "trace")
	want := fmt.Sprintf("-> trace forwarded (new) ingress endpoint 7, identity %d->%d: 10.0.1.1:40000 -> 10.0.0.7:80 TCP [SYN], labels [%s] -> [%s]",
		s.Client.ID, s.Web.ID, strings.Join(monitortest.Labels(s.Client), ","), strings.Join(monitortest.Labels(s.Web), ","))
	// The monitor subscribes before it prints; packets are sent until
	// the first trace arrives.
	celltest.Eventually(t, "apiary monitor --type trace prints the forwarded SYN", func() bool {
		s.Ingress(t, s.AllowedTCP())
		return strings.Contains(m.out.String(), "\n")
	})
	m.stop(t)
	if got := strings.Split(m.out.String(), "\n")[0]; got != want {
		t.Errorf("apiary monitor --type trace printed\n%s\nwant\n%s", got, want)
	}
}

// TestMonitorEndsWhenAgentStops: the stream's end is reported, not taken
// for an interrupt.
func TestMonitorEndsWhenAgentStops(t *testing.T) {
	a := monitortest.Start(t)
	m := startMonitor(t, a.Socket)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := a.Hive.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-m.code:
		m.code <- code
		if code != 1 || !strings.Contains(m.errOut.String(), "the agent closed the monitor stream") {
			t.Errorf("apiary monitor exit %d, stderr %q; want 1 and the stream's end", code, m.errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("apiary monitor still running 10s after the agent stopped")
	}
}

func TestMonitorLine(t *testing.T) {
	icmp := uint8(128)
	tests := []struct {
		name string
		give models.MonitorMessage
		want string
	}{
		{"lost", models.MonitorMessage{Type: "lost", Lost: 12}, "!! lost 12 events: apiary monitor read too slowly"},
		{"ipv6 egress verdict", models.MonitorMessage{Type: "policy-verdict", MonitorEvent: &models.MonitorEvent{
			Verdict: "allow", Match: "L3-Only", Direction: "egress", EndpointID: 3, Protocol: "UDP",
			Source:      models.MonitorPeer{Identity: 1000, Labels: []string{"k8s:app=a"}, IP: "fd00::7", Port: 5353},
			Destination: models.MonitorPeer{Identity: 2, Labels: []string{"reserved:world"}, IP: "2001:db8::1", Port: 53},
		}}, "-> policy-verdict allow (match L3-Only) egress endpoint 3, identity 1000->2: [fd00::7]:5353 -> [2001:db8::1]:53 UDP, labels [k8s:app=a] -> [reserved:world]"},
		{"icmpv6 drop of an unknown identity", models.MonitorMessage{Type: "drop", MonitorEvent: &models.MonitorEvent{
			Reason: "Policy denied by denylist", Direction: "ingress", EndpointID: 3, Protocol: "ICMPv6", ICMPType: &icmp,
			Source:      models.MonitorPeer{Identity: 70000, Labels: []string{}, IP: "fd00::9"},
			Destination: models.MonitorPeer{Identity: 1000, Labels: []string{"k8s:app=a"}, IP: "fd00::7"},
		}}, "xx drop (Policy denied by denylist) ingress endpoint 3, identity 70000->1000: fd00::9 -> fd00::7 ICMPv6 type 128, labels [] -> [k8s:app=a]"},
		{"tcp drop with flags", models.MonitorMessage{Type: "drop", MonitorEvent: &models.MonitorEvent{
			Reason: "Policy denied", Direction: "ingress", EndpointID: 3, Protocol: "TCP", TCPFlags: "SYN",
			Source:      models.MonitorPeer{Identity: 1001, Labels: []string{"k8s:app=b"}, IP: "10.0.0.9", Port: 40000},
			Destination: models.MonitorPeer{Identity: 1000, Labels: []string{"k8s:app=a"}, IP: "10.0.0.7", Port: 80},
		}}, "xx drop (Policy denied) ingress endpoint 3, identity 1001->1000: 10.0.0.9:40000 -> 10.0.0.7:80 TCP [SYN], labels [k8s:app=b] -> [k8s:app=a]"},
		{"not IP", models.MonitorMessage{Type: "drop", MonitorEvent: &models.MonitorEvent{
			Reason: "Unknown L3 protocol", Direction: "egress", EndpointID: 3, Protocol: "ANY",
			Source: models.MonitorPeer{Identity: 1000}, Destination: models.MonitorPeer{},
		}}, "xx drop (Unknown L3 protocol) egress endpoint 3, identity 1000->0: ? -> ? ANY, labels [] -> []"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cli.MonitorLine(tt.give); got != tt.want {
				t.Errorf("MonitorLine =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
