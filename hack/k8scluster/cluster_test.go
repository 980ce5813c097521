package k8scluster_test

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
	"github.com/apiary-net/apiary/hack/k8scluster"
)

// serverPolicy lets app=client reach app=server on 8080 only.
const serverPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: server, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: server}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: client}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

var cnpGVR = schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumnetworkpolicies"}

// TestTwoNodeCluster is the cluster a user gets from install/kubernetes
// with no etcd anywhere: the controller manager's pod CIDRs, identities
// as CiliumIdentity objects shared by both nodes, other nodes' pods from
// CiliumEndpoints, and pods on two nodes talking over the tunnel with a
// CiliumNetworkPolicy from the API server enforced on the receiving node.
func TestTwoNodeCluster(t *testing.T) {
	c := k8scluster.Start(t, k8scluster.Options{Nodes: 2})
	n1, n2 := c.Nodes[0], c.Nodes[1]
	ctx := context.Background()

	client1 := c.RunPod(n1, "default", "client-1", map[string]string{"app": "client"})
	client2 := c.RunPod(n2, "default", "client-2", map[string]string{"app": "client"})
	server := c.RunPod(n2, "default", "server", map[string]string{"app": "server"})

	t.Run("pod addresses from the node's spec.podCIDRs", func(t *testing.T) {
		for _, p := range []*k8scluster.Pod{client1, client2, server} {
			node, err := c.Clientset().CoreV1().Nodes().Get(ctx, p.Node.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(node.Spec.PodCIDRs) == 0 {
				t.Fatalf("node %s has no spec.podCIDRs", p.Node.Name)
			}
			cidr := netip.MustParsePrefix(node.Spec.PodCIDRs[0])
			if !cidr.Contains(p.IPv4()) {
				t.Errorf("pod %s has %s, outside its node's %s", p.Name, p.IPv4(), cidr)
			}
		}
	})

	t.Run("one CiliumIdentity for one label set on two nodes", func(t *testing.T) {
		id1 := c.WaitPodIdentity(t, n1, client1)
		id2 := c.WaitPodIdentity(t, n2, client2)
		if id1 != id2 {
			t.Fatalf("app=client has identity %d on %s and %d on %s", id1, n1.Name, id2, n2.Name)
		}
		// Each node knows the other's pods (their CiliumEndpoints).
		if got := c.WaitPodIdentity(t, n1, client2); got != id1 {
			t.Errorf("%s sees client-2 as %d, want %d", n1.Name, got, id1)
		}
		if _, err := c.API.Dynamic().Resource(schema.GroupVersionResource{Group: "cilium.io", Version: "v2", Resource: "ciliumidentities"}).
			Get(ctx, itoa(id1), metav1.GetOptions{}); err != nil {
			t.Errorf("CiliumIdentity %d: %v", id1, err)
		}
	})

	stop1 := echo(t, server, 8080)
	defer stop1()
	stop2 := echo(t, server, 9090)
	defer stop2()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(serverPolicy), &obj.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := c.API.Dynamic().Resource(cnpGVR).Namespace("default").Create(ctx, &obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	t.Run("policy across nodes over the tunnel", func(t *testing.T) {
		c.WaitPolicyInForce(t, server)
		celltest.EventuallyWithin(t, "client-1 (node-1) reaches server:8080 (node-2)", time.Minute, func() bool {
			return netnstest.Dial(client1.NS, server.IPv4(), 8080, time.Second) == nil
		})
		if err := netnstest.Dial(client1.NS, server.IPv4(), 9090, 2*time.Second); err == nil {
			t.Error("client-1 reached server:9090, which the policy does not allow")
		}
	})

	t.Run("hubble flows name both pods", func(t *testing.T) {
		// The drop of client-1 -> server:9090 at node-2, and the
		// forwarded connection to 8080, as `hubble observe` shows them.
		var drop, fwd string
		celltest.EventuallyWithin(t, "the drop and the forwarded flow in node-2's Hubble", 30*time.Second, func() bool {
			_ = netnstest.Dial(client1.NS, server.IPv4(), 9090, 100*time.Millisecond)
			drop = n2.Observe(t, "--verdict", "DROPPED", "--to-port", "9090", "--last", "1", "-o", "json")
			fwd = n2.Observe(t, "--verdict", "FORWARDED", "--to-port", "8080", "--from-pod", "default/client-1", "--last", "1")
			return strings.Contains(drop, "POLICY_DENIED") && strings.Contains(fwd, "default/server:8080")
		})
		for _, want := range []string{`"pod_name":"client-1"`, `"pod_name":"server"`, `"namespace":"default"`, `"destination_port":9090`, `"node_name":"default/node-2"`} {
			if !strings.Contains(drop, want) {
				t.Errorf("drop flow lacks %s:\n%s", want, drop)
			}
		}
		if !strings.Contains(fwd, "default/client-1") || !strings.Contains(fwd, "FORWARDED") {
			t.Errorf("forwarded flow %q, want client-1 -> server:8080 FORWARDED", fwd)
		}
		t.Logf("hubble observe:\n%s", fwd)
	})

	t.Run("no route for pod CIDRs on the underlay", func(t *testing.T) {
		netnstest.Must(t, c.Lab, func() error {
			if r, err := netlink.RouteGet(server.IPv4().AsSlice()); err == nil {
				return fmt.Errorf("the underlay routes %s: %v", server.IPv4(), r)
			}
			return nil
		})
	})

	t.Run("ClusterIP service to the server across nodes", func(t *testing.T) {
		// The EndpointSlice controller makes the slice of the server pod;
		// client-1's node balances the ClusterIP to it in its endpoint
		// program (DNAT), over the tunnel, and policy judges the
		// server's identity and port 8080.
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "server"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "server"}, Ports: []corev1.ServicePort{
				{Name: "http", Port: 80, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(8080)},
			}},
		}
		created, err := c.Clientset().CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vip := netip.MustParseAddr(created.Spec.ClusterIP)
		celltest.EventuallyWithin(t, fmt.Sprintf("client-1 reaches server through %s:80", vip), time.Minute, func() bool {
			return netnstest.Dial(client1.NS, vip, 80, time.Second) == nil
		})
		conn := netnstest.Connect(t, client1.NS, vip, 80)
		defer conn.Close()
		netnstest.RoundTrip(t, conn, "through the ClusterIP")
		if got := conn.RemoteAddr().String(); got != netip.AddrPortFrom(vip, 80).String() {
			t.Errorf("the connection's peer is %s, want the ClusterIP", got)
		}
	})

	t.Run("restarts of the server's agent under traffic", func(t *testing.T) {
		const restarts = 5
		id := c.WaitPodIdentity(t, n1, client1)
		conn := netnstest.Connect(t, client1.NS, server.IPv4(), 8080)
		defer conn.Close()
		netnstest.RoundTrip(t, conn, "before")
		var bypass, attempts atomic.Int32
		hammer, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { // the denied flow, every few ms, for the whole restart
			defer close(done)
			for hammer.Err() == nil {
				attempts.Add(1)
				if netnstest.Dial(client1.NS, server.IPv4(), 9090, 50*time.Millisecond) == nil {
					bypass.Add(1)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}()
		for i := range restarts {
			start := time.Now()
			n2.StopAgent()
			stopped := time.Since(start)
			n2.StartAgent()
			n2.WaitHealthy()
			c.WaitPolicyInForce(t, server)
			t.Logf("restart %d: agent of %s stopped in %v, ready again after %v", i+1, n2.Name, stopped, time.Since(start))
			netnstest.RoundTrip(t, conn, fmt.Sprintf("after restart %d", i+1))
		}
		cancel()
		<-done
		if n := bypass.Load(); n > 0 {
			t.Errorf("%d denied connections to server:9090 passed during the restart", n)
		}
		if n := attempts.Load(); n < 4*restarts {
			t.Errorf("only %d denied connections tried during the restart", n)
		}
		if got := c.WaitPodIdentity(t, n2, client1); got != id {
			t.Errorf("client-1's identity %d after the restart, was %d", got, id)
		}
	})
}

// echo serves port on pod p's address until stopped.
func echo(t *testing.T, p *k8scluster.Pod, port int) func() {
	t.Helper()
	stop, err := netnstest.Echo(p.NS, p.IPv4(), port)
	if err != nil {
		t.Fatal(err)
	}
	return stop
}

func itoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
