package agent_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
			createEndpoint(t, c, 3, pods["c"], "c")
			serve(t, pods["a"], ipA, 8080)
			serve(t, pods["b"], ipB, 8080)
			wantTCP(t, pods["a"], ipB, 8080, tt.aToB)
			wantTCP(t, pods["c"], ipB, 8080, tt.cToB)
			wantTCP(t, pods["b"], ipA, 8080, tt.bToA)
		})
	}
}
