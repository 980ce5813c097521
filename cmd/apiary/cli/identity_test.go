package cli_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/kvstore/kvstorecell"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/identity/identitycell"
	"github.com/apiary-net/apiary/policy/labels"
)

func TestIdentityCommands(t *testing.T) {
	var alloc identity.Allocator
	socket := startAgent(t, kvstorecell.Cell, identitycell.Cell, celltest.Capture(&alloc))
	ctx := context.Background()
	web, _, err := alloc.AllocateIdentity(ctx, labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app", "web"),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
	}))
	if err != nil {
		t.Fatal(err)
	}
	cidr, _, err := alloc.AllocateIdentity(ctx, identity.CIDRLabels(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		t.Fatal(err)
	}
	if web.ID != 256 || cidr.ID != 1<<24+1 {
		t.Fatalf("ids %d and %d, want 256 and 16777217 (first of each range in standalone mode)", web.ID, cidr.ID)
	}

	code, out, errOut := run(t, socket, "identity", "list")
	wantStart := `ID         LABELS
1          reserved:host
2          reserved:world
3          reserved:unmanaged
4          reserved:health
5          reserved:init
6          reserved:remote-node
7          reserved:kube-apiserver
8          reserved:ingress
9          reserved:world-ipv4
10         reserved:world-ipv6
256        k8s:app=web
           k8s:io.cilium.k8s.policy.cluster=default
           k8s:io.kubernetes.pod.namespace=default
16777217   cidr:0.0.0.0/0
           cidr:0.0.0.0/1
`
	if code != 0 || !strings.HasPrefix(out, wantStart) || !strings.HasSuffix(out, "           reserved:world\n") {
		t.Errorf("identity list = %d (stderr %q):\n%s\nwant it to start with:\n%s", code, errOut, out, wantStart)
	}

	code, out, _ = run(t, socket, "identity", "list", "-o", "json")
	var list []models.Identity
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 12 || list[10].Scope != "global" {
		t.Errorf("identity list -o json = %d %q", code, out)
	}

	code, out, _ = run(t, socket, "identity", "get", "256")
	want := `ID    SCOPE    LABELS
256   global   k8s:app=web
               k8s:io.cilium.k8s.policy.cluster=default
               k8s:io.kubernetes.pod.namespace=default
`
	if code != 0 || out != want {
		t.Errorf("identity get 256 = %d:\n%s\nwant:\n%s", code, out, want)
	}
	code, out, _ = run(t, socket, "identity", "get", "world", "-o", "json")
	var one models.Identity
	if code != 0 || json.Unmarshal([]byte(out), &one) != nil || one.ID != 2 || one.Scope != "reserved" {
		t.Errorf("identity get world -o json = %d %q", code, out)
	}
	code, _, errOut = run(t, socket, "identity", "get", "99999")
	if code != 1 || errOut != "GET /v1/identity/99999: 404 Not Found: identity 99999 not found\n" {
		t.Errorf("unknown identity = %d %q, want 1 and one line", code, errOut)
	}
	code, _, errOut = run(t, socket, "identity", "list", "-o", "yaml")
	if code != 1 || !strings.Contains(errOut, `--output: "yaml" is not text or json`) {
		t.Errorf("bad -o = %d %q", code, errOut)
	}

	code, out, _ = run(t, socket, "status")
	if !regexp.MustCompile(`(?m)^Identities:\s+Ok\s+\d+ global, \d+ local, standalone \(local-only allocator\)$`).MatchString(out) {
		t.Errorf("status = %d:\n%s\nwant an Identities line saying standalone", code, out)
	}
}
