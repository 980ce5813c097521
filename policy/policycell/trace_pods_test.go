package policycell_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/policy/identity"
)

// redisPolicy opens the named port redis of protected-db to employees:
// a trace by labels knows no named ports, a trace by pod does.
const redisPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: redis-from-employees, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: protected-db}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: employee}}]
    toPorts: [{ports: [{port: redis, protocol: TCP}]}]
`

// TestTracePods traces pods and addresses found in the ipcache, which
// learns them from the kvstore as another node of the cluster publishes
// them, against a real etcd.
func TestTracePods(t *testing.T) {
	a := startPodAgent(t, redisPolicy)
	c, ipc, ctx := a.client, a.ipc, context.Background()
	publish := a.publish

	// Node b of cluster1 runs both pods: it allocated their identities
	// and published their addresses.
	db, employee := a.pod("protected-db"), a.pod("employee")
	publish("10.3.3.3", "protected-db-0", db, `[{"Name":"redis","Port":6379,"Protocol":"TCP"}]`)
	publish("10.3.3.10", "employee-0", employee, `null`)
	celltest.Eventually(t, "the pods in the ipcache", func() bool {
		e, ok := ipc.LookupByIP(netip.MustParseAddr("10.3.3.10"))
		return ok && e.K8sPodName == "employee-0"
	})

	trace := func(src, dst string) (*models.PolicyTrace, error) {
		return c.PolicyTrace(ctx, models.PolicyTraceRequest{Source: strings.Split(src, ","), Destination: strings.Split(dst, ","), DPort: "6379/TCP"})
	}
	for _, tc := range []struct {
		src, dst       string
		want           bool
		srcPod, dstPod string
		srcID, dstID   identity.NumericIdentity
	}{
		{"default/employee-0", "default/protected-db-0", true,
			"cluster1/default/employee-0 (10.3.3.10)", "cluster1/default/protected-db-0 (10.3.3.3)", employee.ID, db.ID},
		{"cluster1/default/employee-0", "10.3.3.3", true,
			"cluster1/default/employee-0 (10.3.3.10)", "cluster1/default/protected-db-0 (10.3.3.3)", employee.ID, db.ID},
		// By labels, the destination's named port is unknown.
		{"app=employee,ns:default", "app=protected-db,ns:default", false, "", "", employee.ID, db.ID},
		// An address no ipcache entry holds is the world of its family,
		// as in the datapath; protected-db admits only employees.
		{"10.9.9.9", "default/protected-db-0", false,
			"10.9.9.9 (no ipcache entry: world-ipv4)", "cluster1/default/protected-db-0 (10.3.3.3)", identity.ReservedWorldIPv4, db.ID},
	} {
		got, err := trace(tc.src, tc.dst)
		if err != nil {
			t.Fatalf("trace %s -> %s: %v", tc.src, tc.dst, err)
		}
		if got.Allowed != tc.want || got.SourcePod != tc.srcPod || got.DestinationPod != tc.dstPod ||
			got.SourceIdentity != uint32(tc.srcID) || got.DestinationIdentity != uint32(tc.dstID) {
			t.Errorf("trace %s -> %s = allowed %v, %q (%d) -> %q (%d); want %v, %q (%d) -> %q (%d)", tc.src, tc.dst,
				got.Allowed, got.SourcePod, got.SourceIdentity, got.DestinationPod, got.DestinationIdentity,
				tc.want, tc.srcPod, tc.srcID, tc.dstPod, tc.dstID)
		}
		// The entry list agrees with the verdict: by pod the named port
		// resolves and the rule's entry covers the traffic.
		if len(got.Ingress.Rules) != 1 || (len(got.Ingress.Rules[0].Allows) == 1) != tc.want {
			t.Errorf("trace %s -> %s: ingress rules %+v; want the entry listed only when allowed", tc.src, tc.dst, got.Ingress.Rules)
		}
	}

	for _, tc := range []struct{ src, dst, want string }{
		{"cluster2/istio-space/employee-0", "default/protected-db-0", `source: "cluster2/istio-space/employee-0": no ipcache entry names pod istio-space/employee-0`},
		{"default/employee-0", "cluster2/default/protected-db-0", `destination: "cluster2/default/protected-db-0": no pod default/protected-db-0 in cluster cluster2; the ipcache has one in cluster cluster1`},
		{"default/", "10.3.3.3", `source: "default/": a pod is ns/name or cluster/ns/name, none of them empty`},
		{"app=x,default/employee-0", "10.3.3.3", `source: "default/employee-0": a pod or an address stands alone`},
	} {
		_, err := trace(tc.src, tc.dst)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, tc.want) {
			t.Errorf("trace %s -> %s = %v; want 400 with %q", tc.src, tc.dst, err, tc.want)
		}
	}

	// ICMP traces through the ipcache: an address must be of the
	// protocol's family.
	for _, tc := range []struct{ src, dst, dport, want string }{
		{"default/employee-0", "10.3.3.3", "EchoRequest/ICMP", ""},
		{"default/employee-0", "fd00::3", "8/ICMP", "dport: protocol ICMP is IPv4 only, and fd00::3 is not an IPv4 address"},
		{"10.3.3.10", "default/protected-db-0", "128/ICMPv6", "dport: protocol ICMPv6 is IPv6 only, and 10.3.3.10 is not an IPv6 address"},
	} {
		got, err := c.PolicyTrace(ctx, models.PolicyTraceRequest{Source: []string{tc.src}, Destination: []string{tc.dst}, DPort: tc.dport})
		if tc.want == "" {
			// protected-db admits employees on redis only: no ICMP.
			if err != nil || got.Allowed || got.DPort != "8/ICMP" || got.DestinationIdentity != uint32(db.ID) {
				t.Errorf("trace %s -> %s %s = %+v, %v; want 8/ICMP to protected-db denied", tc.src, tc.dst, tc.dport, got, err)
			}
			continue
		}
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || !strings.Contains(apiErr.Message, tc.want) {
			t.Errorf("trace %s -> %s %s = %v; want 400 with %q", tc.src, tc.dst, tc.dport, err, tc.want)
		}
	}
}
