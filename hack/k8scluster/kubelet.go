package k8scluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// plugNode connects node n's namespace to the lab bridge (eth0 in the
// node, its underlay address; no other route).
func (c *Cluster) plugNode(n *Node, i int) {
	node, err := netns.GetFromPath(n.NS)
	if err != nil {
		c.t.Fatal(err)
	}
	defer node.Close()
	labSide := fmt.Sprintf("n%d", i+1)
	netnstest.Must(c.t, c.Lab, func() error {
		veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: labSide}, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(node))}
		if err := netlink.LinkAdd(veth); err != nil {
			return fmt.Errorf("add the underlay veth of %s: %w", n.Name, err)
		}
		br, err := netlink.LinkByName("br0")
		if err != nil {
			return err
		}
		l, err := netlink.LinkByName(labSide)
		if err != nil {
			return err
		}
		if err := netlink.LinkSetMaster(l, br); err != nil {
			return err
		}
		return netlink.LinkSetUp(l)
	})
	netnstest.Must(c.t, n.NS, func() error {
		l, err := netlink.LinkByName("eth0")
		if err != nil {
			return err
		}
		if err := netlink.AddrAdd(l, nlAddr(netip.PrefixFrom(n.IP, underlay.Bits()))); err != nil {
			return err
		}
		return netlink.LinkSetUp(l)
	})
}

// registerNode creates the Node object with the node's address, as
// kubelet does when it starts; the controller manager then gives it its
// pod CIDR.
func (c *Cluster) registerNode(n *Node) {
	ctx := context.Background()
	nodes := c.API.Clientset().CoreV1().Nodes()
	obj := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: map[string]string{
		"kubernetes.io/hostname": n.Name, "kubernetes.io/os": "linux",
	}}}
	if _, err := nodes.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		c.t.Fatalf("register node %s: %v", n.Name, err)
	}
	// The controller manager may change the Node between the create
	// and the status update (its pod CIDR, its taints): read it again on
	// a conflict, as kubelet does.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := nodes.Get(ctx, n.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: n.IP.String()},
			{Type: corev1.NodeHostName, Address: n.Name},
		}
		cur.Status.Conditions = []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}}
		_, err = nodes.UpdateStatus(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		c.t.Fatalf("node %s status: %v", n.Name, err)
	}
}

// Pod is a running pod.
type Pod struct {
	Namespace, Name string
	Node            *Node
	// NS is the pod's network namespace.
	NS  string
	IPs []netip.Addr
	UID string
}

// IPv4 is the pod's IPv4 address (invalid: none).
func (p *Pod) IPv4() netip.Addr {
	for _, ip := range p.IPs {
		if ip.Is4() {
			return ip
		}
	}
	return netip.Addr{}
}

// RunPod creates a pod through the API server on node n and wires it as
// kubelet does: a network namespace, apiary-cni ADD from the node's
// namespace with kubelet's CNI environment, and the pod's addresses
// written to its status. The pod is deleted (CNI DEL first) with the
// test.
func (c *Cluster) RunPod(n *Node, namespace, name string, labels map[string]string) *Pod {
	c.t.Helper()
	ctx := context.Background()
	cs := c.API.Clientset()
	if _, err := cs.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); err != nil {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
		if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			c.t.Fatalf("create namespace %s: %v", namespace, err)
		}
	}
	obj := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: corev1.PodSpec{NodeName: n.Name, Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		}}},
	}
	created, err := cs.CoreV1().Pods(namespace).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatalf("create pod %s/%s: %v", namespace, name, err)
	}
	p := &Pod{Namespace: namespace, Name: name, Node: n, NS: netnstest.New(c.t, "k8sc-pod"), UID: string(created.UID)}
	result := c.cni(n, p, "ADD")
	var res struct {
		IPs []struct {
			Address string `json:"address"`
		} `json:"ips"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		c.t.Fatalf("CNI ADD of %s: result %s: %v", name, result, err)
	}
	for _, ip := range res.IPs {
		pfx, err := netip.ParsePrefix(ip.Address)
		if err != nil {
			c.t.Fatalf("CNI ADD of %s: address %q: %v", name, ip.Address, err)
		}
		p.IPs = append(p.IPs, pfx.Addr())
	}
	c.t.Cleanup(func() { c.cni(n, p, "DEL") })
	created.Status.Phase = corev1.PodRunning
	created.Status.HostIP = n.IP.String()
	created.Status.HostIPs = []corev1.HostIP{{IP: n.IP.String()}}
	for _, ip := range p.IPs {
		created.Status.PodIPs = append(created.Status.PodIPs, corev1.PodIP{IP: ip.String()})
	}
	if len(p.IPs) > 0 {
		created.Status.PodIP = p.IPs[0].String()
	}
	created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if _, err := cs.CoreV1().Pods(namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		c.t.Fatalf("pod %s status: %v", name, err)
	}
	return p
}

// cni runs apiary-cni command for pod p in node n's namespace, with
// the network configuration the agent wrote, as kubelet (through the
// container runtime) does; it returns the plugin's output.
func (c *Cluster) cni(n *Node, p *Pod, command string) []byte {
	c.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(c.bins.cni)
	cmd.Env = append(os.Environ(),
		"CNI_COMMAND="+command, "CNI_CONTAINERID="+p.UID, "CNI_NETNS="+p.NS, "CNI_IFNAME=eth0",
		"CNI_PATH="+filepath.Dir(c.bins.cni),
		fmt.Sprintf("CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=%s;K8S_POD_NAME=%s;K8S_POD_INFRA_CONTAINER_ID=%s", p.Namespace, p.Name, p.UID))
	cmd.Stdin = bytes.NewReader(pluginConf(c, n))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Forked from a thread in the node's namespace, as kubelet runs it.
	if err := inNS(n.NS, cmd.Start); err != nil {
		c.t.Fatalf("CNI %s of %s: %v", command, p.Name, err)
	}
	if err := cmd.Wait(); err != nil {
		c.t.Fatalf("CNI %s of %s: %v\n%s%s", command, p.Name, err, stdout.String(), stderr.String())
	}
	return stdout.Bytes()
}

// pluginConf is the configuration a runtime gives the plugin: the
// conflist's plugin entry with the network's name and CNI version.
func pluginConf(c *Cluster, n *Node) []byte {
	data, err := os.ReadFile(n.CNIConf())
	if err != nil {
		c.t.Fatal(err)
	}
	var list struct {
		CNIVersion string           `json:"cniVersion"`
		Name       string           `json:"name"`
		Plugins    []map[string]any `json:"plugins"`
	}
	if err := json.Unmarshal(data, &list); err != nil || len(list.Plugins) == 0 {
		c.t.Fatalf("%s: %v (%d plugins)", n.CNIConf(), err, len(list.Plugins))
	}
	p := list.Plugins[0]
	p["cniVersion"], p["name"] = list.CNIVersion, list.Name
	conf, err := json.Marshal(p)
	if err != nil {
		c.t.Fatal(err)
	}
	return conf
}

// WaitPodIdentity waits until node n's agent knows pod p's identity in
// its ipcache (from its own endpoints or the pod's CiliumEndpoint) and
// returns it.
func (c *Cluster) WaitPodIdentity(t testing.TB, n *Node, p *Pod) uint32 {
	t.Helper()
	var id uint32
	celltest.EventuallyWithin(t, fmt.Sprintf("%s knows %s (%s)", n.Name, p.Name, p.IPv4()), time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		e, err := n.Client.IPCacheGet(ctx, p.IPv4().String())
		if err != nil || e.Prefix != p.IPv4().String()+"/32" {
			return false
		}
		id = e.Identity
		return id != 0
	})
	return id
}

// WaitPolicyInForce waits until pod p's agent has at least one policy
// rule and p's endpoint enforces ingress at the agent's policy revision
// (or a later one): the policy is in its BPF maps.
func (c *Cluster) WaitPolicyInForce(t testing.TB, p *Pod) {
	t.Helper()
	celltest.EventuallyWithin(t, fmt.Sprintf("policy in force at %s", p.Name), time.Minute, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		rules, err := p.Node.Client.PolicyGet(ctx, nil)
		if err != nil || len(rules.Rules) == 0 {
			return false
		}
		eps, err := p.Node.Client.Endpoints(ctx)
		if err != nil {
			return false
		}
		for _, ep := range eps {
			if ep.PodNamespace == p.Namespace && ep.PodName == p.Name {
				return ep.Policy.IngressEnforcement && ep.Policy.Revision >= rules.Revision
			}
		}
		return false
	})
}
