package bpfsim_test

import (
	"errors"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/datapath/bpfsim"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/simulate"
)

// addressScenario has an IPv6-only pod, a pod without addresses and an
// IPv4-only one, so that queries need synthetic addresses: the kernel
// still decides on the sides' identities.
const addressScenario = `
namespaces: [{name: x}]
endpoints:
  - {name: a, namespace: x, labels: {app: a}, ips: ["fd00::a"]}
  - {name: b, namespace: x, labels: {app: b}}
  - {name: c, namespace: x, labels: {app: c}, ips: [10.0.0.3]}
policies:
  - apiVersion: cilium.io/v2
    kind: CiliumNetworkPolicy
    metadata: {name: b, namespace: x}
    spec:
      endpointSelector: {matchLabels: {app: b}}
      ingress:
        - fromEndpoints: [{matchLabels: {app: a}}]
          toPorts: [{ports: [{port: "80", protocol: TCP}]}]
      egress:
        - toCIDR: [192.0.2.0/24]
  - apiVersion: cilium.io/v2
    kind: CiliumNetworkPolicy
    metadata: {name: a, namespace: x}
    spec:
      endpointSelector: {matchLabels: {app: a}}
      ingress:
        - fromEndpoints: [{matchLabels: {app: c}}]
queries:
  - {from: x/a, to: x/b, port: 80}
  - {from: x/c, to: x/b, port: 80}
  - {from: 10.0.0.3, to: "fd00::a", port: 80, protocol: UDP}
  - {from: x/b, to: x/a, port: 80, protocol: SCTP}
  - {from: x/b, to: 192.0.2.1, port: 443}
  - {from: x/b, to: 198.51.100.1, port: 443}
  - {from: x/b, to: "2001:db8::1", port: 443}
  - {from: x/b, to: x/b, port: 443}
`

func TestAddressesAndCleanup(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	sim, err := simulate.Load("addresses.yaml", []byte(addressScenario))
	if err != nil {
		t.Fatal(err)
	}
	d, err := bpfsim.New(testLogger(), sim.Model())
	if err != nil {
		t.Fatal(err)
	}
	root := d.Root()
	kernel, err := d.Run(t.Context(), true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"x/a -> x/b 80/TCP ALLOWED",
		"x/c -> x/b 80/TCP DENIED",
		"10.0.0.3 -> fd00::a 80/UDP ALLOWED",
		"x/b -> x/a 80/SCTP DENIED",
		"x/b -> 192.0.2.1 443/TCP ALLOWED",
		"x/b -> 198.51.100.1 443/TCP DENIED",
		"x/b -> 2001:db8::1 443/TCP DENIED",
		"x/b -> x/b 443/TCP ALLOWED",
	}
	for i, r := range kernel {
		if r.String() != want[i] {
			t.Errorf("query %d: %s, want %s", i, r, want[i])
		}
	}
	// The verdicts come from the programs, which say which one decided.
	if r := kernel[1].Ingress; r.Reason != "dropped by to_container: Policy denied (133)" {
		t.Errorf("x/c -> x/b ingress: %s", r)
	}
	if r := kernel[5].Egress; r.Reason != "dropped by from_container: Policy denied (133)" {
		t.Errorf("x/b -> 198.51.100.1 egress: %s", r)
	}
	if r := kernel[0].Ingress; r.Reason != "allowed by to_container: policy map, L3-L4 match" {
		t.Errorf("x/a -> x/b ingress: %s", r)
	}
	if diff := differences(sim.RunExplain(), kernel); len(diff) > 0 {
		t.Errorf("kernel and engine differ:\n%s", strings.Join(diff, "\n"))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("private root %s still there after Close (%v)", root, err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), root) {
		t.Errorf("private bpffs %s still mounted after Close", root)
	}
}

// TestIdentityMismatchIsAnError checks that a verdict is never reported
// when the programs decided with another peer identity than the engine:
// the engine gives 8.8.8.8, which no prefix covers, world-ipv4 (9); an
// ipcache entry giving it reserved:world (2) makes the programs see 2.
func TestIdentityMismatchIsAnError(t *testing.T) {
	bpfmaptest.RequireBPF(t)
	sim, err := simulate.Load("world.yaml", []byte(worldScenario))
	if err != nil {
		t.Fatal(err)
	}
	m := sim.Model()
	if id, ok := m.Prefixes[netip.MustParsePrefix("8.8.8.8/32")]; ok {
		t.Fatalf("the model has 8.8.8.8/32 (identity %d) though no prefix covers it", id)
	}
	m.Prefixes[netip.MustParsePrefix("8.8.8.8/32")] = identity.ReservedWorld
	d, err := bpfsim.New(testLogger(), m)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = d.Run(t.Context(), false)
	if err == nil || !strings.Contains(err.Error(), "peer identity 2, the engine decided with 256 and 9") {
		t.Errorf("error %v, want one about the peer identity", err)
	}
}

// worldScenario has one endpoint whose egress opens ::/0 only, and
// queries to uncovered addresses of both families.
const worldScenario = `
namespaces: [{name: x}]
endpoints: [{name: a, namespace: x, labels: {app: a}, ips: [10.0.0.1, "fd00::1"]}]
policies:
  - apiVersion: networking.k8s.io/v1
    kind: NetworkPolicy
    metadata: {name: v6-world, namespace: x}
    spec:
      podSelector: {}
      policyTypes: [Egress]
      egress: [{to: [{ipBlock: {cidr: "::/0"}}]}]
queries:
  - {from: x/a, to: 8.8.8.8, port: 443}
  - {from: x/a, to: "2001:4860:4860::8888", port: 443}
`

// TestWorldPerFamilyAgrees checks, with the real programs, that an egress
// ipBlock ::/0 opens IPv6 addresses no prefix covers and not IPv4 ones,
// and that the engine, with no per-address ipcache entry, says the same.
func TestWorldPerFamilyAgrees(t *testing.T) {
	sim, err := simulate.Load("world.yaml", []byte(worldScenario))
	if err != nil {
		t.Fatal(err)
	}
	engine, kernel := runBoth(t, sim)
	if diff := differences(engine, kernel); len(diff) > 0 {
		t.Errorf("kernel and engine differ:\n%s", strings.Join(diff, "\n"))
	}
	want := []string{simulate.Denied, simulate.Allowed}
	for i, r := range kernel {
		if r.Verdict != want[i] {
			t.Errorf("kernel: %s, want %s", r, want[i])
		}
	}
}
