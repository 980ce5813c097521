package cli_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/datapathtest"
	"github.com/apiary-net/apiary/datapath/endpoint/endpointcell"
)

func TestEndpointListGet(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	celltest.StartWithFlags(t, []string{"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"),
		"cluster-name=c1", "node-name=node-a", "node-ip=192.0.2.10", "pod-cidr=10.0.1.0/24,fd00:1::/120"},
		agent.Infrastructure, agent.ControlPlane, endpointcell.Cell, datapathtest.Cell)
	c := client.New(socket)
	defer c.Close()
	ns := filepath.Join(dir, "netns")
	if err := os.WriteFile(ns, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ep, err := c.EndpointPut(context.Background(), 3, models.EndpointRequest{NetNSPath: ns,
		Labels: []string{"app=web", "io.kubernetes.pod.namespace=default"}})
	if err != nil {
		t.Fatal(err)
	}

	code, out, errOut := run(t, socket, "endpoint", "list")
	if code != 0 {
		t.Fatalf("endpoint list: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := strings.Fields(lines[0])
	if strings.Join(header, " ") != "ENDPOINT POLICY (ingress) ENFORCEMENT POLICY (egress) ENFORCEMENT IDENTITY LABELS (source:key[=value]) IPv4 IPv6 STATUS" {
		t.Fatalf("header %q", lines[0])
	}
	want0 := []string{"3", "Disabled", "Disabled", itoa(ep.Identity), "k8s:app=web", "10.0.1.2", "fd00:1::2", "ready"}
	if got := strings.Fields(lines[1]); strings.Join(got, " ") != strings.Join(want0, " ") {
		t.Fatalf("row %q, want %q\n%s", got, want0, out)
	}
	// Further labels on their own lines.
	if len(lines) < 3 || !strings.Contains(lines[2], "k8s:io.kubernetes.pod.namespace=default") {
		t.Fatalf("labels not one per line:\n%s", out)
	}

	code, out, errOut = run(t, socket, "endpoint", "get", "3")
	if code != 0 {
		t.Fatalf("endpoint get: %d %s", code, errOut)
	}
	var got models.Endpoint
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("endpoint get is not JSON: %v\n%s", err, out)
	}
	if got.ID != 3 || got.IPv4 != "10.0.1.2" || got.HostInterface != "lxc3" {
		t.Fatalf("endpoint get: %+v", got)
	}
	if code, _, errOut := run(t, socket, "endpoint", "get", "4"); code == 0 || !strings.Contains(errOut, "404") && !strings.Contains(errOut, "not found") {
		t.Fatalf("get of a missing endpoint: %d %q", code, errOut)
	}
	if code, _, errOut := run(t, socket, "endpoint", "get", "x"); code == 0 || !strings.Contains(errOut, "endpoint id") {
		t.Fatalf("get x: %d %q", code, errOut)
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
