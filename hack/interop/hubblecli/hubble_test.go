package hubblecli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
	"github.com/apiary-net/apiary/datapath/hubble/hubbletest"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
)

// hubbleBin and relayBin are the hubble CLI and hubble-relay built by
// TestMain.
var hubbleBin, relayBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "hubblecli")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	hubbleBin, relayBin = filepath.Join(dir, "hubble"), filepath.Join(dir, "hubble-relay")
	for bin, pkg := range map[string]string{hubbleBin: "github.com/cilium/cilium/hubble", relayBin: "github.com/cilium/cilium/hubble-relay"} {
		build := exec.Command("go", "build", "-o", bin, pkg)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg+":", err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := 0
	func() {
		defer os.RemoveAll(dir)
		defer func() {
			if err := goleak.Find(); err != nil {
				fmt.Fprintln(os.Stderr, err)
				code = 1
			}
		}()
		code = m.Run()
	}()
	os.Exit(code)
}

// hubble runs the CLI against the agent and returns its output.
func hubble(t *testing.T, a *hubbletest.Agent, args ...string) string {
	t.Helper()
	out, err := hubbleAt(t, "unix://"+a.Socket, args...)
	if err != nil {
		t.Fatalf("hubble %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// hubbleAt runs the CLI against server.
func hubbleAt(t *testing.T, server string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hubbleBin, append(args, "--server", server)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// apiary runs `apiary <args> --server unix://...` in the test process.
func apiary(t *testing.T, a *hubbletest.Agent, args ...string) string {
	t.Helper()
	var out, errOut strings.Builder
	if code := cli.Execute(context.Background(), append(args, "--server", "unix://"+a.Socket), &out, &errOut); code != 0 {
		t.Fatalf("apiary %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// jsonFlow is the part of hubble's JSON output the test reads.
type jsonFlow struct {
	Flow struct {
		Verdict        string `json:"verdict"`
		DropReasonDesc string `json:"drop_reason_desc"`
		IsReply        *bool  `json:"is_reply"`
		Direction      string `json:"traffic_direction"`
		Source         struct {
			Namespace string `json:"namespace"`
			PodName   string `json:"pod_name"`
		} `json:"source"`
		Destination struct {
			Namespace string `json:"namespace"`
			PodName   string `json:"pod_name"`
		} `json:"destination"`
		L4 struct {
			TCP struct {
				SourcePort      int `json:"source_port"`
				DestinationPort int `json:"destination_port"`
			} `json:"TCP"`
		} `json:"l4"`
	} `json:"flow"`
	NodeName string `json:"node_name"`
}

func parseFlows(t *testing.T, out string) []jsonFlow {
	t.Helper()
	var flows []jsonFlow
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var f jsonFlow
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			t.Fatalf("hubble -o json line %q: %v", line, err)
		}
		flows = append(flows, f)
	}
	return flows
}

// TestHubbleCLI: Cilium's hubble CLI lists the policy drop between two
// pods (both pod names, POLICY_DENIED, the port) and the forwarded flow
// of the allowed connection, reports the flows in `hubble status`, and
// streams a new flow with --follow.
func TestHubbleCLI(t *testing.T) {
	a := hubbletest.Start(t)
	s := a.NewScene(t)
	if v := s.Ingress(t, s.AllowedTCP()); v != monitortest.ActOK {
		t.Fatalf("allowed flow: verdict %d", v)
	}
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}
	obs := observer.NewObserverClient(a.Dial(t))
	celltest.Eventually(t, "two flows in the ring", func() bool {
		st, err := obs.ServerStatus(context.Background(), &observer.ServerStatusRequest{})
		return err == nil && st.SeenFlows == 2
	})

	flows := parseFlows(t, hubble(t, a, "observe", "-o", "json", "--last", "100"))
	if len(flows) != 2 {
		t.Fatalf("hubble observe listed %d flows, want 2: %+v", len(flows), flows)
	}
	fwd, drop := flows[0].Flow, flows[1].Flow
	if drop.Verdict != "DROPPED" || drop.DropReasonDesc != "POLICY_DENIED" || drop.L4.TCP.DestinationPort != 22 ||
		drop.Source.PodName != hubbletest.ClientPod || drop.Destination.PodName != hubbletest.WebPod ||
		drop.Source.Namespace != hubbletest.Namespace || drop.Direction != "INGRESS" {
		t.Errorf("drop %+v", drop)
	}
	if fwd.Verdict != "FORWARDED" || fwd.L4.TCP.DestinationPort != 80 || fwd.IsReply == nil || *fwd.IsReply ||
		fwd.Source.PodName != hubbletest.ClientPod || fwd.Destination.PodName != hubbletest.WebPod {
		t.Errorf("forwarded %+v", fwd)
	}

	denied := hubble(t, a, "observe", "--verdict", "DROPPED", "--to-pod", hubbletest.Namespace+"/"+hubbletest.WebPod)
	if !strings.Contains(denied, hubbletest.Namespace+"/"+hubbletest.ClientPod) || !strings.Contains(denied, "Policy denied") ||
		strings.Contains(denied, "FORWARDED") {
		t.Errorf("hubble observe --verdict DROPPED:\n%s", denied)
	}
	t.Logf("hubble observe --verdict DROPPED:\n%s", denied)

	status := hubble(t, a, "status")
	if !strings.Contains(status, "Current/Max Flows: 2/4,095") {
		t.Errorf("hubble status does not report 2 of 4,095 flows:\n%s", status)
	}

	t.Run("filters", func(t *testing.T) {
		client := fmt.Sprint(s.Client.ID)
		for _, tc := range []struct {
			args []string
			want int // flows listed
		}{
			{[]string{"--namespace", hubbletest.Namespace}, 2},
			{[]string{"--namespace", "other"}, 0},
			{[]string{"--from-label", "k8s:app=client"}, 2},
			{[]string{"--label", "app=db"}, 0},
			{[]string{"--type", "drop"}, 1},
			{[]string{"--type", "trace:to-endpoint"}, 1},
			{[]string{"--protocol", "tcp", "--to-port", "22"}, 1},
			{[]string{"--identity", client}, 2},
			{[]string{"--to-identity", client}, 0},
			{[]string{"--traffic-direction", "ingress"}, 2},
			{[]string{"--drop-reason-desc", "POLICY_DENIED"}, 1},
			{[]string{"--verdict", "FORWARDED"}, 1},
			{[]string{"--not-reply"}, 1},
			{[]string{"--reply"}, 0},
			{[]string{"--to-pod", hubbletest.Namespace + "/web", "--from-ip", "10.0.1.1"}, 2},
			{[]string{"--node-name", "c1/*"}, 2},
		} {
			args := append([]string{"observe", "--last", "100"}, tc.args...)
			want := hubble(t, a, args...)
			if got := strings.Count(want, "\n"); got != tc.want {
				t.Errorf("hubble %s listed %d flows, want %d:\n%s", strings.Join(args, " "), got, tc.want, want)
			}
			if got := apiary(t, a, args...); got != want {
				t.Errorf("apiary %s:\n%s\nhubble prints:\n%s", strings.Join(args, " "), got, want)
			}
		}
	})

	t.Run("field mask, first, since", func(t *testing.T) {
		masked := hubble(t, a, "observe", "-o", "json", "--last", "100", "--field-mask", "verdict,l4.TCP.destination_port")
		if strings.Count(masked, "\n") != 2 || strings.Contains(masked, `"source"`) || !strings.Contains(masked, `"destination_port":22`) {
			t.Errorf("hubble observe --field-mask verdict,l4.TCP.destination_port:\n%s", masked)
		}
		if first := hubble(t, a, "observe", "--first", "1"); strings.Count(first, "\n") != 1 || !strings.Contains(first, "FORWARDED") {
			t.Errorf("hubble observe --first 1:\n%s", first)
		}
		if since := hubble(t, a, "observe", "--since", "1h"); strings.Count(since, "\n") != 2 {
			t.Errorf("hubble observe --since 1h:\n%s", since)
		}
		if future := hubble(t, a, "observe", "--since", "2099-01-01T00:00:00Z"); future != "" {
			t.Errorf("hubble observe --since 2099:\n%s", future)
		}
	})

	t.Run("apiary observe prints what hubble prints", func(t *testing.T) {
		for _, args := range [][]string{
			{"observe", "-o", "json", "--last", "100"},
			{"observe", "--last", "100"},
			{"observe", "--verdict", "DROPPED", "--pod", hubbletest.Namespace + "/" + hubbletest.WebPod},
			{"observe", "-o", "json", "--from-label", "k8s:app=client", "--to-port", "80"},
		} {
			want := hubble(t, a, args...)
			got := apiary(t, a, args...)
			if got != want || want == "" {
				t.Errorf("apiary %s:\n%s\nhubble prints:\n%s", strings.Join(args, " "), got, want)
			}
		}
	})

	if out := apiary(t, a, "hubble", "status"); !strings.Contains(out, "Current/Max Flows: 2/4095 (0.05%)") {
		t.Errorf("apiary hubble status:\n%s", out)
	}

	t.Run("follow", func(t *testing.T) { follow(t, a, s) })
}

// follow runs `hubble observe --follow` and sends new connections until
// one is streamed.
func follow(t *testing.T, a *hubbletest.Agent, s *monitortest.Scene) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, hubbleBin, "observe", "--follow", "-o", "json", "--port", "80", "--server", "unix://"+a.Socket)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for i := 0; ; i++ {
		p := s.AllowedTCP()
		p.Sport = uint16(42000 + i)
		if v := s.Ingress(t, p); v != monitortest.ActOK {
			t.Fatalf("verdict %d", v)
		}
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("hubble observe --follow ended")
			}
			f := parseFlows(t, line)[0].Flow
			if f.L4.TCP.SourcePort < 42000 || f.Verdict != "FORWARDED" {
				t.Errorf("followed flow %+v, want a new connection", f)
			}
			return
		case <-time.After(200 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("hubble observe --follow streamed nothing")
		}
	}
}
