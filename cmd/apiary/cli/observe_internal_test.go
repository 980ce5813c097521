package cli

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/apiary-net/apiary/datapath/hubble/api/flow"
	"github.com/apiary-net/apiary/datapath/hubble/api/observer"
)

// observeRequest parses args as apiary observe's flags.
func observeRequest(t *testing.T, args ...string) (string, error) {
	t.Helper()
	o := &observeOptions{}
	if err := observeCommand(o).ParseFlags(args); err != nil {
		return "", err
	}
	req, err := o.request(time.Unix(1000, 0))
	if err != nil {
		return "", err
	}
	return prototext.MarshalOptions{}.Format(req), nil
}

func TestObserveRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		give []string
		want []string // substrings of the request, text format
	}{
		{"default last 20", nil, []string{"number:20"}},
		{"follow has no number", []string{"-f"}, []string{"follow:true"}},
		{"first", []string{"--first", "5"}, []string{"number:5", "first:true"}},
		{"since ago", []string{"--since", "10s"}, []string{"seconds:990"}},
		{"from pod in namespace", []string{"--from-pod", "web", "--from-namespace", "shop"}, []string{`source_pod:"shop/web"`}},
		{"either end: two filters", []string{"--pod", "shop/web", "--verdict", "dropped"},
			[]string{`whitelist:{source_pod:"shop/web" verdict:DROPPED}`, `whitelist:{destination_pod:"shop/web" verdict:DROPPED}`}},
		{"type with sub type", []string{"-t", "trace:to-endpoint"}, []string{"event_type:{type:4 match_sub_type:true}"}},
		{"namespace alone", []string{"-n", "shop"}, []string{`source_pod:"shop/"`, `destination_pod:"shop/"`}},
		{"to a service", []string{"--to-service", "shop/api"}, []string{`destination_service:"shop/api"`}},
		{"a service at either end", []string{"--service", "kube-system/kube-dns", "--from-pod", "shop/web"},
			[]string{`whitelist:{source_pod:"shop/web" source_service:"kube-system/kube-dns"}`, `whitelist:{source_pod:"shop/web" destination_service:"kube-system/kube-dns"}`}},
		{"reply", []string{"--not-reply", "--drop-reason-desc", "POLICY_DENIED"}, []string{"reply:false", "drop_reason_desc:POLICY_DENIED"}},
		{"a service in a namespace", []string{"-n", "kube-system", "--service", "kube-dns"},
			[]string{`whitelist:{source_service:"kube-system/kube-dns"}`, `whitelist:{destination_service:"kube-system/kube-dns"}`}},
		{"to a service of a namespace", []string{"--to-namespace", "kube-system", "--to-service", "kube-dns", "--from-pod", "shop/web"},
			[]string{`whitelist:{source_pod:"shop/web" destination_service:"kube-system/kube-dns"}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := observeRequest(t, tc.give...)
			if err != nil {
				t.Fatal(err)
			}
			got = strings.Join(strings.Fields(got), "")
			for _, w := range tc.want {
				if !strings.Contains(got, strings.ReplaceAll(w, " ", "")) {
					t.Errorf("request %s lacks %s", got, w)
				}
			}
		})
	}
	for _, bad := range [][]string{
		{"--verdict", "maybe"}, {"--type", "l7"}, {"--since", "yesterday"}, {"--first", "2", "-f"},
		{"-o", "table"}, {"--traffic-direction", "sideways"}, {"--identity", "4294967296"}, {"--drop-reason-desc", "BAD"},
		{"--from-service", "a", "--service", "b"}, {"--pod", "a", "--to-pod", "b"}, {"--port", "80", "--from-port", "81"},
		{"-n", "shop", "--to-service", "api"},
	} {
		if _, err := observeRequest(t, bad...); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: %v, want an error naming the flag", bad, err)
		}
	}
}

func TestCompactFlow(t *testing.T) {
	f := &flow.Flow{
		Time:    timestamppb.New(time.Date(2026, 11, 27, 1, 48, 13, 970e6, time.UTC)),
		Verdict: flow.Verdict_FORWARDED, IsReply: wrapperspb.Bool(true),
		IP:          &flow.IP{Source: "10.0.0.7", Destination: "10.0.1.1"},
		L4:          &flow.Layer4{Protocol: &flow.Layer4_TCP{TCP: &flow.TCP{SourcePort: 80, DestinationPort: 40000}}},
		Source:      &flow.Endpoint{Identity: 65792, Namespace: "shop", PodName: "web-0"},
		Destination: &flow.Endpoint{Identity: 2},
		EventType:   &flow.CiliumEventType{Type: 4, SubType: 3},
		Summary:     "TCP Flags: SYN, ACK",
	}
	want := "Nov 27 01:48:13.970: 10.0.1.1:40000 (world) <- shop/web-0:80 (ID:65792) to-stack FORWARDED (TCP Flags: SYN, ACK)"
	if got := CompactFlow(f); got != want {
		t.Errorf("CompactFlow = %q\nwant          %q", got, want)
	}
}

func TestLostEventsGoToStderr(t *testing.T) {
	lost := &observer.GetFlowsResponse{ResponseTypes: &observer.GetFlowsResponse_LostEvents{
		LostEvents: &flow.LostEvent{Source: flow.LostEventSource_PERF_EVENT_RING_BUFFER, NumEventsLost: 3}}}
	for _, asJSON := range []bool{false, true} {
		var out, errOut strings.Builder
		if err := printFlowResponse(&out, &errOut, lost, asJSON); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), "PERF_EVENT_RING_BUFFER") || !strings.Contains(errOut.String(), "3") {
			t.Errorf("json %v: stdout %q, stderr %q; want the loss on stderr", asJSON, out.String(), errOut.String())
		}
	}
}
