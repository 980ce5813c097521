package bpfapi_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/datapath/bpfapi"
	"github.com/apiary-net/apiary/datapath/monitor/monitortest"
	"github.com/apiary-net/apiary/policy"
)

// TestMapsAfterTraffic runs an allowed and a denied flow through the
// endpoint's programs and reads the maps back through the API.
func TestMapsAfterTraffic(t *testing.T) {
	a := monitortest.Start(t)
	s := a.NewScene(t)
	allowed := s.AllowedTCP()
	if v := s.Ingress(t, allowed); v != monitortest.ActOK {
		t.Fatalf("allowed flow: verdict %d", v)
	}
	if v := s.Ingress(t, s.DeniedTCP()); v != monitortest.ActShot {
		t.Fatalf("denied flow: verdict %d", v)
	}
	ctx := context.Background()

	t.Run("policy", func(t *testing.T) {
		p, err := a.Client.BPFPolicy(ctx, "7")
		if err != nil {
			t.Fatal(err)
		}
		client, db := monitortest.Labels(s.Client), monitortest.Labels(s.DB)
		type row struct {
			policy, dir string
			id          uint32
			labels      []string
			ports       string
		}
		want := []row{
			{"Allow", "Ingress", uint32(s.Client.ID), client, "8/ICMP"},
			{"Allow", "Ingress", uint32(s.Client.ID), client, "80/TCP"},
			{"Allow", "Ingress", uint32(s.Client.ID), client, "8080-8087/TCP"},
			{"Deny", "Ingress", uint32(s.DB.ID), db, "ANY"},
			{"Allow", "Egress", 0, []string{}, "ANY"},
		}
		var got []row
		for _, e := range p.Entries {
			got = append(got, row{e.Policy, e.Direction, e.Identity, e.Labels, e.PortRange})
		}
		if !slices.EqualFunc(got, want, func(a, b row) bool {
			return a.policy == b.policy && a.dir == b.dir && a.id == b.id && slices.Equal(a.labels, b.labels) && a.ports == b.ports
		}) {
			t.Errorf("policy entries\n got %+v\nwant %+v", got, want)
		}
		for _, e := range p.Entries {
			if e.PortRange == "80/TCP" && (e.Packets != 1 || e.Bytes == 0) {
				t.Errorf("the allowed flow's entry counted %d packets, %d bytes; want 1 packet", e.Packets, e.Bytes)
			}
		}
	})

	t.Run("ct", func(t *testing.T) {
		var items []models.BPFCTEntry
		for page, err := range a.Client.BPFCTPages(ctx, client.ListOptions{}) {
			if err != nil {
				t.Fatal(err)
			}
			items = append(items, page.Items...)
		}
		if len(items) != 1 {
			t.Fatalf("conntrack holds %+v, want the allowed flow only", items)
		}
		e := items[0]
		if e.Protocol != "TCP" || e.Source != "10.0.1.1:40000" || e.Destination != "10.0.0.7:80" ||
			e.Direction != "ingress" || e.EndpointID != s.EndpointID || e.PeerIdentity != uint32(s.Client.ID) ||
			e.ExpiresInSeconds <= 0 || !strings.Contains(e.TCPFlags, "SYN") {
			t.Errorf("conntrack entry %+v, want the TCP flow 10.0.1.1:40000 -> 10.0.0.7:80 ingress of endpoint %d from %d, live, SYN seen",
				e, s.EndpointID, s.Client.ID)
		}
	})

	t.Run("metrics", func(t *testing.T) {
		m, err := a.Client.BPFMetrics(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var drop *models.BPFMetric
		for i, x := range m.Items {
			if x.Reason == "Policy denied" && x.Direction == "ingress" {
				drop = &m.Items[i]
			}
		}
		if drop == nil || drop.Packets != 1 || drop.Bytes == 0 || drop.ReasonCode != 133 {
			t.Errorf("metrics %+v: want one ingress packet dropped for Policy denied (133)", m.Items)
		}
	})

	t.Run("ipcache paged", func(t *testing.T) {
		var prefixes []string
		pages := 0
		for page, err := range a.Client.BPFIPCachePages(ctx, client.ListOptions{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, e := range page.Items {
				prefixes = append(prefixes, e.Prefix+"="+itoa(e.Identity))
			}
		}
		want := []string{"10.0.0.7/32=" + itoa(uint32(s.Web.ID)), "10.0.1.1/32=" + itoa(uint32(s.Client.ID)), "10.0.1.2/32=" + itoa(uint32(s.DB.ID))}
		if !slices.Equal(prefixes, want) || pages != 3 {
			t.Errorf("ipcache in %d pages: %v, want 3 pages of %v", pages, prefixes, want)
		}
	})
}

func TestBadRequests(t *testing.T) {
	a := monitortest.Start(t)
	tests := []struct {
		name string
		give string
		code int
		want string
	}{
		{"endpoint id not a number", "/v1/bpf/policy/web", http.StatusBadRequest, "endpoint-id"},
		{"endpoint id zero", "/v1/bpf/policy/0", http.StatusBadRequest, "endpoint-id"},
		{"endpoint id too large", "/v1/bpf/policy/65536", http.StatusBadRequest, "endpoint-id"},
		{"unknown endpoint", "/v1/bpf/policy/99", http.StatusNotFound, "endpoint 99"},
		{"ipcache bad limit", "/v1/bpf/ipcache?limit=-1", http.StatusBadRequest, "limit"},
		{"ct bad continue", "/v1/bpf/ct?continue=xyz", http.StatusBadRequest, "continue"},
		{"ipcache token of ct", "/v1/bpf/ipcache?continue=YnBmLWN0OjQ", http.StatusBadRequest, "continue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.Client.Get(context.Background(), tt.give, nil)
			var apiErr *client.APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.code || !strings.Contains(apiErr.Message, tt.want) {
				t.Errorf("GET %s: %v, want %d naming %q", tt.give, err, tt.code, tt.want)
			}
		})
	}
	if _, err := a.Client.BPFPolicy(context.Background(), "99"); err == nil {
		t.Error("an unknown endpoint's policy was served")
	}
	if pinned, _ := filepathGlob(a.Root + "/policy_99"); len(pinned) != 0 {
		t.Errorf("asking for endpoint 99 pinned a policy map: %v", pinned)
	}
}

func TestPortRange(t *testing.T) {
	tests := []struct {
		name string
		give policy.Key
		want string
	}{
		{"any protocol", policy.Key{}, "ANY"},
		{"every port", policy.Key{Proto: policy.ProtoUDP}, "ANY/UDP"},
		{"one port", policy.Key{Proto: policy.ProtoTCP, Port: 443, PrefixLen: 16}, "443/TCP"},
		{"range", policy.Key{Proto: policy.ProtoSCTP, Port: 8080, PrefixLen: 13}, "8080-8087/SCTP"},
		{"range from a port inside", policy.Key{Proto: policy.ProtoTCP, Port: 8083, PrefixLen: 13}, "8080-8087/TCP"},
		{"upper half", policy.Key{Proto: policy.ProtoTCP, Port: 32768, PrefixLen: 1}, "32768-65535/TCP"},
		{"icmp type", policy.Key{Proto: policy.ProtoICMPv6, Port: 128, PrefixLen: 16}, "128/ICMPv6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bpfapi.PortRange(tt.give); got != tt.want {
				t.Errorf("PortRange(%v) = %q, want %q", tt.give, got, tt.want)
			}
		})
	}
}

// TestWithoutDatapath: in an agent without the BPF loader the endpoints
// say so (503) instead of failing to start the agent.
func TestWithoutDatapath(t *testing.T) {
	a := monitortest.StartWithoutDatapath(t)
	for _, path := range []string{"/v1/bpf/ipcache", "/v1/bpf/ct", "/v1/bpf/metrics", "/v1/bpf/policy/7", "/v1/bpf/lb", "/v1/monitor"} {
		_, err := a.Client.Get(context.Background(), path, nil)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || !strings.Contains(apiErr.Message, "no BPF datapath") {
			t.Errorf("GET %s: %v, want 503 saying there is no BPF datapath", path, err)
		}
	}
}
