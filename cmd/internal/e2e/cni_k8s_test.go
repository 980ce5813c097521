package e2e_test

import (
	"context"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// k8sPodRuntimeConf is what kubelet's runtime passes for pod ns/name:
// no labels, the pod's namespace and name in CNI_ARGS.
func k8sPodRuntimeConf(id, netns, ns, name string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: id, NetNS: netns, IfName: "eth0",
		Args: [][2]string{{"IgnoreUnknown", "1"}, {"K8S_POD_NAMESPACE", ns}, {"K8S_POD_NAME", name},
			{"K8S_POD_INFRA_CONTAINER_ID", id}}}
}

// TestCNIKubernetes runs apiary-cni as kubelet's runtime does, for pods
// created through a real kube-apiserver on the agent's node (the agent
// installed from install/kubernetes, as its service account): the
// endpoints and their identities get the pods' and namespace's labels,
// and a NetworkPolicy created through the API server allows a->b on one
// port and not on another, until it is deleted.
func TestCNIKubernetes(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	ctx := context.Background()
	srv := k8stest.Start(t)
	applyInstall(t, srv)
	cs := srv.Clientset()
	const ns = "shop"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{"team": "shop"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, app := range []string{"a", "b"} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app, Labels: map[string]string{"app": app}},
			Spec: corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A pod of another node with a's name in another namespace: not ours.
	other := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a", Labels: map[string]string{"app": "x"}},
		Spec: corev1.PodSpec{NodeName: "node-b", Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}}}
	if _, err := cs.CoreV1().Pods("default").Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	node := netnstest.New(t, "apiary-node")
	netns := map[string]string{"a": netnstest.New(t, "apiary-pod"), "b": netnstest.New(t, "apiary-pod")}
	// The node's pod CIDR comes from kube-controller-manager through its
	// Node (ipam: kubernetes in the ConfigMap), as in a cluster.
	// A cluster CIDR of one /24: node-a gets 10.0.1.0/24, which
	// checkResult expects.
	srv.StartControllerManager(t, k8stest.NodeIPAM{ClusterCIDRs: []string{"10.0.1.0/24"}, MaskSizeIPv4: 24})
	inst := newInstalledAgent(t, srv, "--datapath-netns="+node)
	n := newCNINet(t, inst.socket)
	agent := startAgent(t, agentBin, inst.args...)
	agent.waitStarted(t)
	waitK8sSynced(t, agent, inst.socket)
	c := client.New(inst.socket)
	defer c.Close()
	var podCIDR netip.Prefix
	celltest.Eventually(t, "kube-controller-manager gives node-a a pod CIDR and the agent's IPAM takes it", func() bool {
		n, err := cs.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
		if err != nil || len(n.Spec.PodCIDRs) == 0 {
			return false
		}
		podCIDR = netip.MustParsePrefix(n.Spec.PodCIDRs[0])
		e, ok := k8sStatusEntry(t, inst.socket, "IPAM")
		return ok && e.State == models.StateOk && strings.HasPrefix(e.Message, "kubernetes: "+podCIDR.String())
	})

	res := map[string]*types100.Result{}
	for _, app := range []string{"a", "b"} {
		rt := k8sPodRuntimeConf("pod-"+app, netns[app], ns, app)
		res[app] = n.add(t, rt)
		checkResult(t, res[app], netns[app])
		if ip, _ := netip.AddrFromSlice(res[app].IPs[0].Address.IP.To4()); !podCIDR.Contains(ip) {
			t.Fatalf("pod %s got %s, not from node-a's pod CIDR %s", app, ip, podCIDR)
		}
		if err := n.cni.CheckNetworkList(ctx, n.list, rt); err != nil {
			t.Fatalf("CHECK pod-%s: %v", app, err)
		}
	}

	t.Run("labels from the pods", func(t *testing.T) {
		eps, err := c.Endpoints(ctx)
		if err != nil || len(eps) != 2 {
			t.Fatalf("endpoints: %+v %v", eps, err)
		}
		for _, ep := range eps {
			app := ep.PodName
			if ep.PodNamespace != ns || (app != "a" && app != "b") || ep.ContainerID != "pod-"+app {
				t.Fatalf("endpoint %d: pod %s/%s container %s", ep.ID, ep.PodNamespace, ep.PodName, ep.ContainerID)
			}
			want := []string{"k8s:app=" + app, "k8s:io.kubernetes.pod.namespace=" + ns, "k8s:io.cilium.k8s.namespace.labels.team=shop"}
			for _, w := range want {
				if !slices.Contains(ep.Labels, w) {
					t.Errorf("endpoint of pod %s: labels %q lack %s", app, ep.Labels, w)
				}
			}
			if slices.Contains(ep.Labels, "k8s:app=x") {
				t.Errorf("endpoint of pod %s has the other node's pod's labels: %q", app, ep.Labels)
			}
			celltest.Eventually(t, "pod "+app+"'s endpoint has an identity", func() bool {
				e, err := c.Endpoint(ctx, ep.ID)
				if err == nil && e.Identity != 0 {
					ep = *e
					return true
				}
				return false
			})
			id, err := c.IdentityGet(ctx, strconv.FormatUint(uint64(ep.Identity), 10))
			if err != nil {
				t.Fatalf("identity %d: %v", ep.Identity, err)
			}
			for _, w := range want {
				if !slices.Contains(id.Labels, w) {
					t.Errorf("identity %d of pod %s: labels %q lack %s", id.ID, app, id.Labels, w)
				}
			}
		}
	})

	t.Run("NetworkPolicy from the API server", func(t *testing.T) {
		addrB, _ := netip.AddrFromSlice(res["b"].IPs[0].Address.IP.To4())
		for _, port := range []int{8080, 9090} {
			stop, err := netnstest.Echo(netns["b"], addrB, port)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
		}
		if err := netnstest.Dial(netns["a"], addrB, 9090, 5*time.Second); err != nil {
			t.Fatalf("a to b on 9090/TCP without a policy: %v", err)
		}
		tcp := corev1.ProtocolTCP
		port := intstr.FromInt32(8080)
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b-from-a"},
			Spec: networkingv1.NetworkPolicySpec{
				PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "b"}},
				PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
				Ingress: []networkingv1.NetworkPolicyIngressRule{{
					From:  []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}}},
					Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port}},
				}},
			}}
		nps := cs.NetworkingV1().NetworkPolicies(ns)
		if _, err := nps.Create(ctx, np, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitIngress(t, c, "pod-b", true)
		if err := netnstest.Dial(netns["a"], addrB, 8080, 5*time.Second); err != nil {
			t.Errorf("a to b on 8080/TCP, allowed by the NetworkPolicy: %v", err)
		}
		if err := netnstest.Dial(netns["a"], addrB, 9090, 700*time.Millisecond); err == nil {
			t.Errorf("a reached b on 9090/TCP, the NetworkPolicy allows only 8080")
		}
		if err := nps.Delete(ctx, np.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitIngress(t, c, "pod-b", false)
		if err := netnstest.Dial(netns["a"], addrB, 9090, 5*time.Second); err != nil {
			t.Errorf("a to b on 9090/TCP after the NetworkPolicy's deletion: %v", err)
		}
	})

	for _, app := range []string{"a", "b"} {
		if err := n.cni.DelNetworkList(ctx, n.list, k8sPodRuntimeConf("pod-"+app, netns[app], ns, app)); err != nil {
			t.Fatalf("DEL pod-%s: %v", app, err)
		}
	}
	if eps, err := c.Endpoints(ctx); err != nil || len(eps) != 0 {
		t.Fatalf("endpoints after DEL: %+v %v", eps, err)
	}
	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Fatalf("apiary-agent exited with %d:\n%s", code, agent.Log())
	}
}

// waitIngress waits until the endpoint of the container enforces
// ingress policy (or no longer does).
func waitIngress(t *testing.T, c *client.Client, containerID string, enforced bool) {
	t.Helper()
	celltest.Eventually(t, "endpoint of "+containerID+" ingress enforcement "+strconv.FormatBool(enforced), func() bool {
		eps, err := c.Endpoints(context.Background())
		return err == nil && slices.ContainsFunc(eps, func(ep models.Endpoint) bool {
			return ep.ContainerID == containerID && ep.Policy.IngressEnforcement == enforced && ep.State == "ready"
		})
	})
}
