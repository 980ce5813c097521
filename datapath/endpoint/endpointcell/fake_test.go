package endpointcell_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/source"
)

var podLabels = []string{"app=web", "io.kubernetes.pod.namespace=default"}

func TestCreateListGetDelete(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	ns1, ns2 := fakeNetNS(t, "ns1"), fakeNetNS(t, "ns2")

	ep1 := a.put(t, 1, models.EndpointRequest{NetNSPath: ns1, Labels: podLabels})
	if ep1.IPv4 != "10.0.1.2" || ep1.IPv6 != "fd00:1::2" || ep1.State != "ready" || ep1.Identity == 0 ||
		ep1.InterfaceName != "eth0" || ep1.HostInterface != "lxc1" {
		t.Fatalf("endpoint 1: %+v", ep1)
	}
	ep2 := a.put(t, 2, models.EndpointRequest{NetNSPath: ns2, InterfaceName: "net1", Labels: podLabels, IPv4: "10.0.1.50"})
	if ep2.IPv4 != "10.0.1.50" || ep2.IPv6 != "fd00:1::3" || ep2.Identity != ep1.Identity {
		t.Fatalf("endpoint 2 (same labels, explicit IPv4): %+v; identity of 1 is %d", ep2, ep1.Identity)
	}
	// The ipcache has both addresses, source local, with the identity.
	for _, ip := range []string{ep1.IPv4, ep1.IPv6, ep2.IPv4} {
		e, ok := a.ipc.LookupByIP(netip.MustParseAddr(ip))
		if !ok || uint32(e.Identity) != ep1.Identity || e.Source != source.Local {
			t.Fatalf("ipcache entry of %s: %+v %v", ip, e, ok)
		}
	}
	if att := f.Attached(); len(att) != 2 || att[1].IfName != "lxc1" || uint32(att[2].Identity) != ep1.Identity {
		t.Fatalf("attached: %+v", att)
	}
	if _, ok := f.PolicyMap(1); !ok {
		t.Fatal("endpoint 1 has no policy map")
	}

	// Paging: one at a time, in id order.
	var ids []uint16
	for page, err := range a.client.EndpointPages(ctx, client.ListOptions{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Items) != 1 {
			t.Fatalf("page of %d items, want 1", len(page.Items))
		}
		ids = append(ids, page.Items[0].ID)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("listed %v, want [1 2]", ids)
	}
	got, err := a.client.Endpoint(ctx, 2)
	if err != nil || got.InterfaceName != "net1" {
		t.Fatalf("GET 2: %+v %v", got, err)
	}

	if err := a.client.EndpointDelete(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Links()[1]; ok {
		t.Fatal("endpoint 1's link left after delete")
	}
	if _, ok := f.Attached()[1]; ok {
		t.Fatal("endpoint 1's programs left after delete")
	}
	if _, ok := f.PolicyMap(1); ok {
		t.Fatal("endpoint 1's policy map left after delete")
	}
	if _, ok := a.ipc.Lookup(ipcache.HostPrefix(netip.MustParseAddr(ep1.IPv4))); ok {
		t.Fatal("endpoint 1's ipcache entry left after delete")
	}
	wantStatus(t, a.client.EndpointDelete(ctx, 1), http.StatusNotFound)
	_, err = a.client.Endpoint(ctx, 1)
	wantStatus(t, err, http.StatusNotFound)
	// Its addresses are free again.
	ep3 := a.put(t, 3, models.EndpointRequest{NetNSPath: ns1, Labels: podLabels, IPv4: ep1.IPv4})
	if ep3.IPv4 != ep1.IPv4 {
		t.Fatalf("endpoint 3 got %s, want the freed %s", ep3.IPv4, ep1.IPv4)
	}
}

// wantStatus checks that err is an API error with code.
func wantStatus(t *testing.T, err error, code int) {
	t.Helper()
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.StatusCode != code {
		t.Fatalf("error %v, want HTTP %d", err, code)
	}
}

func TestCreateBadRequests(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	ns := fakeNetNS(t, "ns")
	a.put(t, 1, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "10.0.1.9"})
	calls := len(f.Calls())

	tests := []struct {
		name string
		id   uint16
		give models.EndpointRequest
		code int
		want []string // in the message
	}{
		{"no netns", 2, models.EndpointRequest{Labels: podLabels}, 400, []string{"field netns-path: empty"}},
		{"relative netns", 2, models.EndpointRequest{NetNSPath: "ns", Labels: podLabels}, 400, []string{"field netns-path"}},
		{"missing netns", 2, models.EndpointRequest{NetNSPath: "/nonexistent/ns", Labels: podLabels}, 400, []string{"field netns-path"}},
		{"long interface", 2, models.EndpointRequest{NetNSPath: ns, InterfaceName: "abcdefghijklmnop", Labels: podLabels}, 400, []string{"field interface-name"}},
		{"no labels", 2, models.EndpointRequest{NetNSPath: ns}, 400, []string{"field labels"}},
		{"reserved label", 2, models.EndpointRequest{NetNSPath: ns, Labels: []string{"reserved:host"}}, 400, []string{"field labels"}},
		{"cidr label", 2, models.EndpointRequest{NetNSPath: ns, Labels: []string{"app=a", "cidr:192.168.0.0/16"}}, 400,
			[]string{"field labels", `label cidr:192.168.0.0/16: source "cidr" belongs to the agent`}},
		{"every agent source in any case", 2, models.EndpointRequest{NetNSPath: ns, Labels: []string{"cidr:0.0.0.0/0", "cidr:garbage", "RESERVED:world", "Fqdn:example.com"}}, 400,
			[]string{"cidr:0.0.0.0/0", "cidr:garbage", "RESERVED:world", "Fqdn:example.com"}},
		{"another cluster", 2, models.EndpointRequest{NetNSPath: ns, Labels: []string{"app=a", "k8s:io.cilium.k8s.policy.cluster=evil"}}, 400,
			[]string{"field labels", `names cluster "evil"`}},
		{"bad ipv4", 2, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "fd00:1::5"}, 400, []string{"field ipv4"}},
		{"two bad fields", 2, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "x", IPv6: "10.0.0.1"}, 400, []string{"field ipv4", "field ipv6"}},
		{"ipv4 outside", 2, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "10.0.2.9"}, 400, []string{"field ipv4", "not in the pod CIDR"}},
		{"ipv4 taken", 2, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "10.0.1.9"}, 400, []string{"field ipv4", "in use by endpoint 1"}},
		{"router", 2, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv6: "fd00:1::1"}, 400, []string{"field ipv6", "router"}},
		{"id taken", 1, models.EndpointRequest{NetNSPath: ns, Labels: podLabels}, 409, []string{"endpoint exists"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := a.client.EndpointPut(ctx, tt.id, tt.give)
			wantStatus(t, err, tt.code)
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
	t.Run("id 0", func(t *testing.T) {
		_, _, err := a.client.Do(ctx, http.MethodPut, "/v1/endpoint/0", models.EndpointRequest{NetNSPath: ns, Labels: podLabels})
		wantStatus(t, err, 400)
	})
	t.Run("unknown field", func(t *testing.T) {
		_, _, err := a.client.Do(ctx, http.MethodPut, "/v1/endpoint/5", map[string]any{"netns": ns})
		wantStatus(t, err, 400)
	})
	// Only the IPv4-taken and IPv6-router requests reached the IPAM; none
	// reached the datapath.
	if got := f.Calls()[calls:]; len(got) != 0 {
		t.Fatalf("bad requests called the datapath: %v", got)
	}
	if eps, _ := a.client.Endpoints(ctx); len(eps) != 1 {
		t.Fatalf("%d endpoints after bad requests, want 1", len(eps))
	}
}

func TestCreateRollsBack(t *testing.T) {
	for _, step := range []string{"CreateEndpointLink", "SyncPolicyMap", "Attach"} {
		t.Run(step, func(t *testing.T) {
			ctx := context.Background()
			f := datapathtest.New()
			stateDir := t.TempDir()
			a := startAgent(t, stateDir, []cell.Cell{datapathtest.CellOf(f)})
			ns := fakeNetNS(t, "ns")
			f.FailNext(step, errors.New("injected failure"))
			_, err := a.client.EndpointPut(ctx, 7, models.EndpointRequest{NetNSPath: ns, Labels: podLabels})
			wantStatus(t, err, http.StatusInternalServerError)
			if !strings.Contains(err.Error(), "injected failure") {
				t.Fatalf("error %v does not give the cause", err)
			}
			if len(f.Links()) != 0 || len(f.Attached()) != 0 {
				t.Fatalf("left behind: links %v, attached %v", f.Links(), f.Attached())
			}
			if _, ok := f.PolicyMap(7); ok {
				t.Fatal("policy map left behind")
			}
			// The ipcache resolves its entries in a worker: the removal
			// is queued when the PUT fails and applied shortly after.
			celltest.Eventually(t, "the failed endpoint's ipcache entry is removed", func() bool {
				_, ok := a.ipc.LookupByIP(netip.MustParseAddr("10.0.1.2"))
				return !ok
			})
			if files, _ := filepath.Glob(filepath.Join(stateDir, "endpoints", "*")); len(files) != 0 {
				t.Fatalf("state files left: %v", files)
			}
			// The identity was released: it is unknown again.
			for _, id := range a.alloc.GetIdentities() {
				if id.Labels.String() != "" && strings.Contains(id.Labels.String(), "app=web") {
					t.Fatalf("identity %d of the failed endpoint still allocated", id.ID)
				}
			}
			ep := a.put(t, 7, models.EndpointRequest{NetNSPath: ns, Labels: podLabels, IPv4: "10.0.1.2"})
			if ep.IPv4 != "10.0.1.2" {
				t.Fatalf("retry got %s, want the released 10.0.1.2", ep.IPv4)
			}
		})
	}
}

const webPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: web, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: client}}]
    toPorts: [{ports: [{port: "80", protocol: TCP}]}]
`

func TestRegenerateOnPolicyChange(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	web := a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	if web.Policy.IngressEnforcement {
		t.Fatalf("enforcement without policy: %+v", web.Policy)
	}
	client := a.put(t, 2, models.EndpointRequest{NetNSPath: fakeNetNS(t, "client"),
		Labels: []string{"app=client", "io.kubernetes.pod.namespace=default"}})
	if _, err := a.client.PolicyPut(ctx, []byte(webPolicy)); err != nil {
		t.Fatal(err)
	}
	want := policy.Key{Identity: identityOf(client), Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: 80, PrefixLen: 16}
	celltest.Eventually(t, "web's policy map allows client on TCP/80", func() bool {
		m, _ := f.PolicyMap(1)
		e, ok := m[want]
		return ok && !e.Deny
	})
	celltest.Eventually(t, "web's programs enforce ingress", func() bool {
		return f.Attached()[1].IngressEnforcement && !f.Attached()[1].EgressEnforcement
	})
	got, err := a.client.Endpoint(ctx, 1)
	if err != nil || !got.Policy.IngressEnforcement || got.Policy.Revision == 0 || got.State != "ready" {
		t.Fatalf("web after the policy: %+v %v", got, err)
	}

	// A map state over the policy map's size is refused: not-ready, in
	// the status, and the map keeps its last good content.
	before, _ := f.PolicyMap(1)
	f.PolicyMapMax = 1
	if _, err := a.client.PolicyPut(ctx, []byte(strings.ReplaceAll(webPolicy, `"80"`, `"81"`))); err != nil {
		t.Fatal(err)
	}
	celltest.Eventually(t, "web not-ready", func() bool {
		ep, err := a.client.Endpoint(ctx, 1)
		return err == nil && ep.State == "not-ready" && strings.Contains(ep.Error, "do not fit")
	})
	if m, _ := f.PolicyMap(1); !m.Equal(before) {
		t.Fatalf("refused map state changed the map: %v, was %v", m, before)
	}
	// Both endpoints' map states (web: 2 keys, client: allow-all in both
	// directions, 2 keys) are over 1 now.
	celltest.Eventually(t, "status line Endpoints says 2 not-ready", func() bool {
		st, err := a.client.Status(ctx)
		if err != nil {
			return false
		}
		line := statusLine(st, "Endpoints")
		return line != nil && line.State == models.StateWarning && strings.Contains(line.Message, "2 endpoints: 2 not-ready") &&
			len(line.Details) == 2 && strings.Contains(line.Details[0], "endpoint 1 (not-ready): write policy map")
	})
}

func identityOf(ep *models.Endpoint) identity.NumericIdentity {
	return identity.NumericIdentity(ep.Identity)
}

// statusLine returns the status entry name, or nil.
func statusLine(st *models.Status, name string) *models.StatusEntry {
	for i := range st.Entries {
		if st.Entries[i].Name == name {
			return &st.Entries[i]
		}
	}
	return nil
}

// TestDeleteFailureCanBeRetried: a delete whose veth removal fails keeps
// the endpoint (disconnecting, with the error); the retry finishes it
// without repeating the steps that were done.
func TestDeleteFailureCanBeRetried(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels})
	f.FailNext("DeleteEndpointLink", errors.New("device busy"))
	err := a.client.EndpointDelete(ctx, 1)
	wantStatus(t, err, http.StatusInternalServerError)
	ep, err := a.client.Endpoint(ctx, 1)
	if err != nil || ep.State != "disconnecting" || !strings.Contains(ep.Error, "device busy") {
		t.Fatalf("after the failed delete: %+v %v", ep, err)
	}
	if len(f.Attached()) != 0 {
		t.Fatal("programs still attached after the failed delete")
	}
	if err := a.client.EndpointDelete(ctx, 1); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := countCalls(f, "Detach 1"); n != 1 {
		t.Fatalf("%d detaches, want 1 (not repeated by the retry)", n)
	}
	if len(f.Links()) != 0 {
		t.Fatal("link left after the retry")
	}
	if _, err := a.client.Endpoint(ctx, 1); err == nil {
		t.Fatal("endpoint left after the retry")
	}
}

const namedPortPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: named, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: web}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: client}}]
    toPorts: [{ports: [{port: http, protocol: TCP}]}]
---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: client, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: client}}
  egress:
  - toEndpoints: [{matchLabels: {app: web}}]
    toPorts: [{ports: [{port: http, protocol: TCP}]}]
`

// TestNamedPorts: an endpoint's named ports resolve its ingress rules
// and, through the ipcache, the egress rules of endpoints that talk to
// it.
func TestNamedPorts(t *testing.T) {
	ctx := context.Background()
	f := datapathtest.New()
	a := startAgent(t, t.TempDir(), []cell.Cell{datapathtest.CellOf(f)})
	if _, err := a.client.PolicyPut(ctx, []byte(namedPortPolicy)); err != nil {
		t.Fatal(err)
	}
	web := a.put(t, 1, models.EndpointRequest{NetNSPath: fakeNetNS(t, "web"), Labels: podLabels,
		NamedPorts: []models.NamedPort{{Name: "http", Port: 8080}}})
	client := a.put(t, 2, models.EndpointRequest{NetNSPath: fakeNetNS(t, "client"),
		Labels: []string{"app=client", "io.kubernetes.pod.namespace=default"}})
	if len(web.NamedPorts) != 1 || web.NamedPorts[0].Protocol != "TCP" {
		t.Fatalf("web's named ports %+v", web.NamedPorts)
	}
	in := policy.Key{Identity: identityOf(client), Direction: policy.Ingress, Proto: policy.ProtoTCP, Port: 8080, PrefixLen: 16}
	out := policy.Key{Identity: identityOf(web), Direction: policy.Egress, Proto: policy.ProtoTCP, Port: 8080, PrefixLen: 16}
	celltest.Eventually(t, "web allows client on 8080 and client may reach web on 8080", func() bool {
		mw, _ := f.PolicyMap(1)
		mc, _ := f.PolicyMap(2)
		_, okIn := mw[in]
		_, okOut := mc[out]
		return okIn && okOut
	})
	e, ok := a.ipc.LookupByIP(netip.MustParseAddr(web.IPv4))
	if !ok || len(e.NamedPorts) != 1 || e.NamedPorts[0].Port != 8080 || e.K8sNamespace != "default" {
		t.Fatalf("web's ipcache entry %+v", e)
	}

	_, err := a.client.EndpointPut(ctx, 3, models.EndpointRequest{NetNSPath: fakeNetNS(t, "x"), Labels: podLabels,
		NamedPorts: []models.NamedPort{{Name: "HTTP", Port: 0, Protocol: "icmp"}, {Name: "dns", Port: 53}, {Name: "dns", Port: 54}}})
	wantStatus(t, err, http.StatusBadRequest)
	for _, w := range []string{"named-ports", "[0].name", "[0].port", "[0].protocol", "[2]: dns/TCP declared twice"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}
