package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cmd/apiary/cli"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// TestFailedCreateLeavesNothing: an endpoint whose policy does not fit
// its map (--bpf-policy-map-max) is refused, and the failed request
// leaves no pinned policy map, no veth and no state file behind.
func TestFailedCreateLeavesNothing(t *testing.T) {
	n := newNodeA(t)
	if err := os.WriteFile(filepath.Join(n.policyDir, "policy.yaml"), []byte(dFullPolicy()), 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := startNode(t, n, nil, "bpf-policy-map-max=64")
	createEndpoint(t, c, 1, netnstest.New(t, "apiary-pod"), "a") // the peer d's 70 ports open to
	ep, err := c.EndpointPut(t.Context(), 4, models.EndpointRequest{NetNSPath: netnstest.New(t, "apiary-pod"),
		Labels: []string{"app=d", "io.kubernetes.pod.namespace=default"}})
	if err == nil || !strings.Contains(err.Error(), "do not fit") {
		t.Fatalf("create with an oversized policy: %+v %v, want a refusal saying the keys do not fit", ep, err)
	}
	if _, err := os.Stat(filepath.Join(n.bpfRoot, "policy_4")); !os.IsNotExist(err) {
		t.Errorf("policy_4 pinned after the failed create (stat: %v)", err)
	}
	if _, err := os.Stat(filepath.Join(n.stateDir, "endpoints", "4.json")); !os.IsNotExist(err) {
		t.Errorf("state file of endpoint 4 after the failed create (stat: %v)", err)
	}
}

// TestPolicyImportWait: `apiary policy import --wait` exits 0 once every
// endpoint enforces the new revision, and 1 naming the endpoint whose
// policy map cannot hold it.
func TestPolicyImportWait(t *testing.T) {
	n := newNodeA(t)
	c, _ := startNode(t, n, nil, "bpf-policy-map-max=64")
	createEndpoint(t, c, 1, netnstest.New(t, "apiary-pod"), "a")
	createEndpoint(t, c, 4, netnstest.New(t, "apiary-pod"), "d")
	dir := t.TempDir()
	run := func(policy string) (int, string) {
		file := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(file, []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut strings.Builder
		code := cli.Execute(t.Context(), []string{"--socket", c.SocketPath(), "policy", "import", "--wait", file}, &out, &errOut)
		return code, errOut.String()
	}
	if code, errOut := run(enforcePolicy); code != 0 {
		t.Fatalf("import --wait of a policy that fits: exit %d, %s", code, errOut)
	}
	code, errOut := run(dFullPolicy())
	if code != 1 || !strings.Contains(errOut, "cannot be enforced by 1 endpoints: endpoint 4:") || !strings.Contains(errOut, "do not fit") {
		t.Fatalf("import --wait of a policy endpoint 4's map cannot hold: exit %d, %q", code, errOut)
	}
}
