package agent_test

import (
	"context"
	"fmt"
	"iter"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"

	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// TestEnablePolicyModes runs Cilium's --enable-policy modes on real
// traffic, with a policy that lets a reach b on 8080 only (a has no
// policy), and --policy-audit-mode: default enforces only where a rule
// selects the endpoint;
// always isolates every endpoint both ways (a may no longer even send to
// b: no egress rule allows it); never lets the denied c reach b, and so
// does audit mode, which still looks the policy up.
func TestEnablePolicyModes(t *testing.T) {
	for _, tt := range []struct {
		mode             string
		audit            bool
		bToA, cToB, aToB bool // allowed
	}{
		{mode: "default", bToA: true, cToB: false, aToB: true},
		// a's egress is in default deny too, and no rule allows it.
		{mode: "always", bToA: false, cToB: false, aToB: false},
		{mode: "never", bToA: true, cToB: true, aToB: true},
		// --policy-audit-mode: b is enforced, but its denials pass.
		{mode: "default", audit: true, bToA: true, cToB: true, aToB: true},
	} {
		name := tt.mode
		if tt.audit {
			name += ", audit"
		}
		t.Run(name, func(t *testing.T) {
			n := newNodeA(t)
			if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(enforcePolicy), 0o600); err != nil {
				t.Fatal(err)
			}
			pods := map[string]string{"a": netnstest.New(t, "apiary-pod"), "b": netnstest.New(t, "apiary-pod"), "c": netnstest.New(t, "apiary-pod")}
			c, _ := startNode(t, n, nil, "enable-policy="+tt.mode, fmt.Sprintf("policy-audit-mode=%t", tt.audit))
			ipA := addrOf(t, createEndpoint(t, c, 1, pods["a"], "a"))
			ipB := addrOf(t, createEndpoint(t, c, 2, pods["b"], "b"))
			ipC := addrOf(t, createEndpoint(t, c, 3, pods["c"], "c"))
			serve(t, pods["a"], ipA, 8080)
			serve(t, pods["b"], ipB, 8080)
			wantTCP(t, pods["a"], ipB, 8080, tt.aToB)
			var verdicts func() string
			if tt.audit {
				verdicts = verdictOf(t, c, ipC, ipB, 8080)
			}
			wantTCP(t, pods["c"], ipB, 8080, tt.cToB)
			if tt.audit {
				// Cilium's monitor says "action audit" for a denial that
				// audit mode let through: the passed flow is no allow.
				if v := verdicts(); v != "audit" {
					t.Errorf("policy verdict of c -> b:8080 = %q, want audit", v)
				}
			}
			wantTCP(t, pods["b"], ipA, 8080, tt.bToA)
		})
	}
}

// verdictOf subscribes to the agent's policy verdicts and returns a
// function that waits for the verdict of the first flow from -> to:port
// and returns it ("" when none came within 10 s).
func verdictOf(t *testing.T, c *client.Client, from, to netip.Addr, port uint16) func() string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	next, stop := iter.Pull2(c.Monitor(ctx, models.MonitorTypePolicyVerdict))
	t.Cleanup(func() { cancel(); stop() })
	if msg, err, ok := next(); !ok || err != nil || msg.Type != models.MonitorTypeSubscribed {
		t.Fatalf("first monitor message = %+v, %v, %v; want subscribed", msg, err, ok)
	}
	return func() string {
		for {
			msg, err, ok := next()
			if !ok || err != nil {
				return ""
			}
			ev := msg.MonitorEvent
			if ev != nil && ev.Source.IP == from.String() && ev.Destination.IP == to.String() && ev.Destination.Port == port {
				return ev.Verdict
			}
		}
	}
}
