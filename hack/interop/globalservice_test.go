package interop_test

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cilium/cilium/pkg/cidr"
	cmstore "github.com/cilium/cilium/pkg/clustermesh/store"
	ciliumidentity "github.com/cilium/cilium/pkg/identity"
	"github.com/cilium/cilium/pkg/loadbalancer"
	"github.com/cilium/cilium/pkg/node/addressing"
	nodetypes "github.com/cilium/cilium/pkg/node/types"

	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/hack/interop"
	"github.com/apiary-net/apiary/kvstore/kvstoretest"
)

// The global service of TestGlobalServiceWithCilium: the seed's
// rebel-base, in apiary1 (ClusterIP 10.96.0.50) and in cilium2 (its own
// ClusterIP), port http 80 to 8080.
var (
	rebelBaseVIP   = netip.MustParseAddrPort("10.96.0.50:80")
	localBackends  = []string{"10.1.1.20", "10.1.1.21"}
	remoteBackends = []string{"10.2.1.10", "10.2.1.14"}
	remoteStranger = "10.2.1.18"
)

// xwingToRebelBase lets the x-wing reach rebel-base pods of both
// clusters on 8080/TCP, and nothing else.
const xwingToRebelBase = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: x-wing-to-rebel-base, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: x-wing}}
  egress:
  - toEndpoints:
    - matchLabels: {app: rebel-base, io.cilium.k8s.policy.cluster: apiary1}
    - matchLabels: {app: rebel-base, io.cilium.k8s.policy.cluster: cilium2}
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// TestGlobalServiceWithCilium: a global service whose remote cluster is
// published by Cilium's own writers, on real packets. Cilium's writers
// (PublishCiliumCluster: clustercfg.Set and clustermesh-apiserver's
// SyncStores with their canaries) publish cluster cilium2 (id 2) in an
// etcd of its own: node worker-1 (pod CIDR 10.2.1.0/24), two rebel-base
// pods and a stranger with their identities, and the global service
// default/rebel-base as Cilium's ClusterService. A whole apiary agent of
// apiary1 (id 1, BPF datapath in a node namespace, native routing with
// --auto-direct-node-routes) meshes with it and has the same service,
// global, in --lb-state-file with two local backends; an x-wing pod
// connects to the ClusterIP many times and each server answers its
// name. Answers come from both clusters; with service.cilium.io/affinity
// local only from apiary1's; with the local backends gone from cilium2's;
// a backend Cilium's writer removes from the ClusterService gets no new
// connection (its pod still answers directly); local backends back,
// affinity local keeps to them again; cilium2's config file removed, its
// backends go. GET /v1/service and `apiary service list` show each
// backend with its cluster, GET /v1/bpf/lb the maps with the cluster ids.
func TestGlobalServiceWithCilium(t *testing.T) {
	if os.Geteuid() != 0 {
		celltest.SkipUnprivileged(t, "network namespaces, veths and BPF programs need root")
	}
	etcdA := kvstoretest.StartServer(t)
	etcdB := kvstoretest.StartServer(t, kvstoretest.WithTLS())
	cilium2 := rebelBaseCilium()
	pub := interop.PublishCiliumCluster(t, etcdB, cilium2)

	node := netnstest.New(t, "apiary-iop-node")
	worker := newWorker(t, node)
	for i, ep := range cilium2.Endpoints {
		ip := netip.MustParseAddr(ep.IP.String())
		pod := newRemotePod(t, worker, i, ip)
		nameServer(t, pod, ip, 8080, "cilium2/"+ep.K8sPodName)
	}

	stateFile := filepath.Join(t.TempDir(), "services.yaml")
	celltest.ReplaceFile(t, stateFile, rebelBaseState("", localBackends...))
	meshDir := meshConfigDir(t, "cilium2", etcdB)
	a := interop.StartApiaryAgent(t, etcdA, "apiary1", 1, "node-a", labNodeIP,
		"clustermesh-config="+meshDir, "datapath-netns="+node, "pod-cidr="+labPodCIDR,
		"auto-direct-node-routes", "lb-state-file="+stateFile)
	if _, err := a.Client.PolicyPut(t.Context(), []byte(xwingToRebelBase)); err != nil {
		t.Fatal(err)
	}
	xwing := createPod(t, a, 1, "x-wing-0", "x-wing", "10.1.1.10")
	for i, ip := range localBackends {
		name := fmt.Sprintf("rebel-base-%d", i)
		nameServer(t, createPod(t, a, uint16(2+i), name, "rebel-base", ip), netip.MustParseAddr(ip), 8080, "apiary1/"+name)
	}
	waitMeshed(t, a, cilium2)

	local := []string{"apiary1/rebel-base-0", "apiary1/rebel-base-1"}
	remote := []string{"cilium2/rebel-base-0", "cilium2/rebel-base-1"}
	t.Run("remote pods by identity", func(t *testing.T) {
		// Allowed by its cilium2 identity (the route to it is the one
		// the agent installed for worker-1's pod CIDR).
		celltest.EventuallyWithin(t, "x-wing reaches cilium2/rebel-base-0 at its address", 30*time.Second, func() bool {
			name, err := askName(xwing, netip.AddrPortFrom(netip.MustParseAddr(remoteBackends[0]), 8080), time.Second)
			return err == nil && name == remote[0]
		})
		if name, err := askName(xwing, netip.MustParseAddrPort(remoteStranger+":8080"), 700*time.Millisecond); err == nil {
			t.Errorf("x-wing reached %s (%s), which the policy does not allow", remoteStranger, name)
		}
	})

	t.Run("both clusters", func(t *testing.T) {
		waitBackends(t, a, localBackend(localBackends[0]), localBackend(localBackends[1]),
			remoteBackend(remoteBackends[0]), remoteBackend(remoteBackends[1]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 60), append(local, remote...))
		if r := a.Status(t, "ClusterMesh"); r.Message != "1/1 clusters ready, 1 global-services" {
			t.Errorf("ClusterMesh status line: %s %q, want \"1/1 clusters ready, 1 global-services\"", r.State, r.Message)
		}
		out := cliOutput(t, a.Client.SocketPath(), "service", "list")
		t.Logf("apiary service list:\n%s", out)
		for _, be := range []string{"10.1.1.20:8080/TCP (active)", "10.2.1.10:8080/TCP (active, cilium2)", "10.2.1.14:8080/TCP (active, cilium2)"} {
			if !strings.Contains(out, be) {
				t.Errorf("apiary service list has no backend %q", be)
			}
		}
	})

	t.Run("affinity local", func(t *testing.T) {
		celltest.ReplaceFile(t, stateFile, rebelBaseState("local", localBackends...))
		waitBackends(t, a, localBackend(localBackends[0]), localBackend(localBackends[1]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 40), local)
	})

	t.Run("affinity local without local backends", func(t *testing.T) {
		celltest.ReplaceFile(t, stateFile, rebelBaseState("local"))
		waitBackends(t, a, remoteBackend(remoteBackends[0]), remoteBackend(remoteBackends[1]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 40), remote)
	})

	t.Run("Cilium's writer removes a backend", func(t *testing.T) {
		svc := cilium2.Services[0]
		svc.Backends = maps.Clone(svc.Backends)
		delete(svc.Backends, remoteBackends[1])
		pub.UpsertService(t, svc)
		waitBackends(t, a, remoteBackend(remoteBackends[0]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 20), remote[:1])
		if name, err := askName(xwing, netip.AddrPortFrom(netip.MustParseAddr(remoteBackends[1]), 8080), 5*time.Second); err != nil || name != remote[1] {
			t.Errorf("the removed backend's pod at its own address: %q, %v; want it still answering", name, err)
		}
	})

	t.Run("local backends back", func(t *testing.T) {
		celltest.ReplaceFile(t, stateFile, rebelBaseState("local", localBackends...))
		waitBackends(t, a, localBackend(localBackends[0]), localBackend(localBackends[1]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 20), local)
	})

	t.Run("cilium2 leaves the mesh", func(t *testing.T) {
		celltest.ReplaceFile(t, stateFile, rebelBaseState("", localBackends...))
		waitBackends(t, a, localBackend(localBackends[0]), localBackend(localBackends[1]), remoteBackend(remoteBackends[0]))
		if err := os.Remove(filepath.Join(meshDir, "cilium2")); err != nil {
			t.Fatal(err)
		}
		waitBackends(t, a, localBackend(localBackends[0]), localBackend(localBackends[1]))
		wantAnswers(t, askNames(t, xwing, rebelBaseVIP, 20), local)
	})
}

// rebelBaseCilium is cluster cilium2 (id 2) as Cilium's converters give
// it: node worker-1 at 192.168.70.2 with pod CIDR 10.2.1.0/24, pods
// rebel-base-0 and -1 and stranger-0 on it with their identities, and
// default/rebel-base, global and shared, backed by the rebel-base pods.
func rebelBaseCilium() interop.CiliumCluster {
	const name, id = "cilium2", uint32(2)
	ident := func(n uint32) ciliumidentity.NumericIdentity { return ciliumidentity.NumericIdentity(id<<16 | n) }
	pod := func(ip, pod string, idn uint32, epID int) ciliumidentity.IPIdentityPair {
		return ciliumidentity.IPIdentityPair{IP: net.ParseIP(ip), HostIP: net.ParseIP(labWorkerIP), ID: ident(idn),
			K8sNamespace: "default", K8sPodName: pod, K8sServiceAccount: "default",
			Metadata: fmt.Sprintf("cilium-global:%s:worker-1:%d", name, epID)}
	}
	labels := func(app string) []string {
		return []string{"k8s:app=" + app, "k8s:io.kubernetes.pod.namespace=default",
			"k8s:io.cilium.k8s.policy.cluster=" + name, "k8s:io.cilium.k8s.policy.serviceaccount=default"}
	}
	svc := cmstore.NewClusterService("rebel-base", "default")
	svc.Cluster, svc.ClusterID, svc.IncludeExternal, svc.Shared = name, id, true, true
	svc.Frontends["10.96.100.50"] = cmstore.PortConfiguration{"http": &loadbalancer.L4Addr{Protocol: loadbalancer.TCP, Port: 80}}
	for _, ip := range remoteBackends {
		svc.Backends[ip] = cmstore.PortConfiguration{"http": &loadbalancer.L4Addr{Protocol: loadbalancer.TCP, Port: 8080}}
	}
	svc.Selector["app"] = "rebel-base"
	return interop.CiliumCluster{
		Name: name, ID: id,
		Nodes: []nodetypes.Node{{
			Name: "worker-1", Cluster: name, ClusterID: id,
			IPAddresses: []nodetypes.Address{
				{Type: addressing.NodeInternalIP, IP: net.ParseIP(labWorkerIP)},
				{Type: addressing.NodeCiliumInternalIP, IP: net.ParseIP("10.2.1.1")},
			},
			IPv4AllocCIDR: cidr.MustParseCIDR("10.2.1.0/24"),
		}},
		Endpoints: []ciliumidentity.IPIdentityPair{
			pod(remoteBackends[0], "rebel-base-0", 300, 1001),
			pod(remoteBackends[1], "rebel-base-1", 300, 1002),
			pod(remoteStranger, "stranger-0", 301, 1003),
		},
		Identities: map[ciliumidentity.NumericIdentity][]string{ident(300): labels("rebel-base"), ident(301): labels("stranger")},
		Services:   []cmstore.ClusterService{svc},
	}
}

// rebelBaseState is the --lb-state-file of apiary1: default/rebel-base,
// global (with affinity when not empty), its EndpointSlice listing the
// backends on node-a.
func rebelBaseState(affinity string, backends ...string) string {
	var b strings.Builder
	b.WriteString("services:\n- metadata:\n    name: rebel-base\n    namespace: default\n    annotations:\n")
	b.WriteString("      service.cilium.io/global: \"true\"\n")
	if affinity != "" {
		fmt.Fprintf(&b, "      service.cilium.io/affinity: %q\n", affinity)
	}
	fmt.Fprintf(&b, "  spec:\n    clusterIP: %s\n    ports: [{name: http, port: 80, targetPort: 8080}]\n", rebelBaseVIP.Addr())
	b.WriteString("endpoints:\n- metadata: {name: rebel-base-1, namespace: default, labels: {kubernetes.io/service-name: rebel-base}}\n")
	b.WriteString("  addressType: IPv4\n  ports: [{name: http, port: 8080}]\n")
	if len(backends) == 0 {
		b.WriteString("  endpoints: []\n")
	} else {
		b.WriteString("  endpoints:\n")
	}
	for _, ip := range backends {
		fmt.Fprintf(&b, "  - {addresses: [%s], nodeName: node-a}\n", ip)
	}
	return b.String()
}

// meshConfigDir is a --clustermesh-config directory naming the etcd of
// srv as cluster name.
func meshConfigDir(t *testing.T, name string, srv *kvstoretest.Server) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := os.ReadFile(srv.WriteConfigFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// createPod creates endpoint id of the agent in a new namespace, pod
// default/name with app=<app> at ip, waits until it is ready and returns
// its namespace.
func createPod(t *testing.T, a *interop.ApiaryAgent, id uint16, name, app, ip string) string {
	t.Helper()
	ns := netnstest.New(t, "apiary-iop-pod")
	if _, err := a.Client.EndpointPut(t.Context(), id, models.EndpointRequest{NetNSPath: ns, IPv4: ip,
		Labels: []string{"app=" + app, "io.kubernetes.pod.namespace=default"}, PodNamespace: "default", PodName: name}); err != nil {
		t.Fatalf("PUT endpoint %d (%s): %v", id, name, err)
	}
	celltest.Eventually(t, fmt.Sprintf("endpoint %d (%s) ready", id, name), func() bool {
		ep, err := a.Client.Endpoint(t.Context(), id)
		return err == nil && ep.State == "ready"
	})
	return ns
}
