package policycell_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
)

// egressRedisPolicy lets employees reach the port redis of protected-db:
// a port of the destination, whatever employees call redis themselves.
const egressRedisPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: employees-to-redis, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: employee}}
  egress:
  - toEndpoints: [{matchLabels: {app: protected-db}}]
    toPorts: [{ports: [{port: redis, protocol: TCP}]}]
`

// TestTraceEgressNamedPortsFromTheIPCache publishes pods in a real etcd
// as another node would: the agent learns their named ports through the
// ipcache, resolves the employee's egress port name against the
// database's ports, in its map state and its rule evaluation alike, and
// asks for a regeneration when the ports change.
func TestTraceEgressNamedPortsFromTheIPCache(t *testing.T) {
	a := startPodAgent(t, egressRedisPolicy)
	c, regen, ctx := a.client, a.regen, context.Background()
	pod, publish := a.pod, a.publish
	db, employee := pod("protected-db"), pod("employee")
	tryTrace := func(src, dst, dport string) (*models.PolicyTrace, error) {
		return c.PolicyTrace(ctx, models.PolicyTraceRequest{Source: strings.Split(src, ","), Destination: strings.Split(dst, ","), DPort: dport})
	}
	trace := func(src, dst, dport string) *models.PolicyTrace {
		got, err := tryTrace(src, dst, dport)
		if err != nil {
			t.Fatalf("trace %s -> %s %s: %v", src, dst, dport, err)
		}
		return got
	}
	allowed := func(dport string) bool {
		got, err := tryTrace("default/employee-0", "default/protected-db-0", dport)
		return err == nil && got.Allowed
	}
	requestsBefore, _ := regen.Stats()
	publish("10.3.3.10", "employee-0", employee, `[{"Name":"redis","Port":7000,"Protocol":"TCP"}]`)
	publish("10.3.3.3", "protected-db-0", db, `[{"Name":"redis","Port":6379,"Protocol":"TCP"}]`)
	celltest.Eventually(t, "the database's redis port resolved", func() bool { return allowed("6379/TCP") })
	if requests, _ := regen.Stats(); requests == requestsBefore {
		t.Errorf("named ports arrived without a regeneration request")
	}

	for _, tc := range []struct {
		src, dst, dport string
		want            bool
		from            string
	}{
		{"default/employee-0", "default/protected-db-0", "6379/TCP", true, models.VerdictFromMapState},
		// redis is 7000 on the employee itself: not the destination's.
		{"default/employee-0", "default/protected-db-0", "7000/TCP", false, models.VerdictFromMapState},
		// By labels, the destination's identity brings its pods' ports.
		{"app=employee,ns:default", "app=protected-db,ns:default", "6379/TCP", true, models.VerdictFromMapState},
		// A label set no endpoint has: no identity, no named ports.
		{"app=employee,ns:default", "app=protected-db,ns:default,tier=x", "6379/TCP", false, models.VerdictFromRules},
	} {
		got := trace(tc.src, tc.dst, tc.dport)
		if got.Egress.Allowed != tc.want || got.Egress.VerdictFrom != tc.from {
			t.Errorf("trace %s -> %s %s: egress allowed %v from %s; want %v from %s", tc.src, tc.dst, tc.dport,
				got.Egress.Allowed, got.Egress.VerdictFrom, tc.want, tc.from)
		}
		if len(got.Egress.Rules) != 1 || (len(got.Egress.Rules[0].Allows) == 1) != tc.want {
			t.Errorf("trace %s -> %s %s: egress rules %+v; want the entry listed only when allowed", tc.src, tc.dst, tc.dport, got.Egress.Rules)
		}
	}

	// The database moves redis: the map state follows.
	publish("10.3.3.3", "protected-db-0", db, `[{"Name":"redis","Port":6380,"Protocol":"TCP"}]`)
	celltest.Eventually(t, "the new port resolved", func() bool { return allowed("6380/TCP") && !allowed("6379/TCP") })
}
