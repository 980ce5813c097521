package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/vishvananda/netlink"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// cniPolicy lets app=a reach app=b on 8080/TCP only.
const cniPolicy = `apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: b-from-a, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: b}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: a}}]
    toPorts: [{ports: [{port: "8080", protocol: TCP}]}]
`

// cniNet is a runtime's view of the apiary network: libcni with the
// plugin directory and a conflist of cniVersion 1.1.0.
type cniNet struct {
	cni  *libcni.CNIConfig
	list *libcni.NetworkConfigList
}

// newCNINet installs apiary-cni as the DaemonSet's init container does
// (`apiary-cni install`) into a CNI bin and conf dir of t, and returns
// libcni reading them.
func newCNINet(t *testing.T, socket string) *cniNet {
	t.Helper()
	binDir, confDir := filepath.Join(t.TempDir(), "bin"), filepath.Join(t.TempDir(), "net.d")
	install := exec.Command(filepath.Join(cniPluginDir(t), "apiary-cni"), "install", "--cni-bin-dir="+binDir,
		"--cni-conf-dir="+confDir, "--socket-path="+socket, "--log-file="+filepath.Join(t.TempDir(), "apiary-cni.log"))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("apiary-cni install: %v\n%s", err, out)
	}
	list, err := libcni.ConfListFromFile(filepath.Join(confDir, "05-apiary.conflist"))
	if err != nil {
		t.Fatal(err)
	}
	if list.CNIVersion != "1.1.0" || list.Name != "apiary" || len(list.Plugins) != 1 || list.Plugins[0].Network.Type != "apiary-cni" {
		t.Fatalf("installed conflist: %s", list.Bytes)
	}
	return &cniNet{cni: libcni.NewCNIConfigWithCacheDir([]string{binDir}, t.TempDir(), nil), list: list}
}

func podRuntimeConf(id, netns, app string) *libcni.RuntimeConf {
	return &libcni.RuntimeConf{ContainerID: id, NetNS: netns, IfName: "eth0",
		Args: [][2]string{{"IgnoreUnknown", "1"}, {"APIARY_LABELS", "app=" + app + ",io.kubernetes.pod.namespace=default"}}}
}

func (n *cniNet) add(t *testing.T, rt *libcni.RuntimeConf) *types100.Result {
	t.Helper()
	r, err := n.cni.AddNetworkList(context.Background(), n.list, rt)
	if err != nil {
		t.Fatalf("ADD %s: %v", rt.ContainerID, err)
	}
	res, err := types100.NewResultFromResult(r)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantCNIError checks that err is a CNI error with code whose message
// says each of want.
func wantCNIError(t *testing.T, op string, err error, code uint, want ...string) {
	t.Helper()
	var te *types.Error
	if !errors.As(err, &te) || te.Code != code {
		t.Fatalf("%s: error %v, want CNI error code %d", op, err, code)
	}
	for _, w := range want {
		if !strings.Contains(te.Msg, w) {
			t.Errorf("%s: error %q does not say %q", op, te.Msg, w)
		}
	}
}

// TestCNIPlugin runs apiary-cni as container runtimes do, through
// libcni, against a running apiary-agent: STATUS and ADD without the
// agent, ADD (twice: same result) and CHECK of two pods, traffic between
// them following an imported policy, CHECK noticing a missing address,
// GC deleting the endpoint of a forgotten container, DEL twice, and ADD
// once the agent is gone.
func TestCNIPlugin(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	ctx := context.Background()
	dir := t.TempDir()
	socket := filepath.Join(dir, "run", "apiary.sock")
	node := netnstest.New(t, "apiary-node")
	pods := map[string]string{"a": netnstest.New(t, "apiary-pod"), "b": netnstest.New(t, "apiary-pod")}
	n := newCNINet(t, socket)
	agentConf := filepath.Join(dir, "agent-net.d", "05-apiary.conflist")

	t.Run("without the agent", func(t *testing.T) {
		wantCNIError(t, "STATUS", n.cni.GetStatusNetworkList(ctx, n.list), types.ErrPluginNotAvailable, socket)
		_, err := n.cni.AddNetworkList(ctx, n.list, podRuntimeConf("pod-a", pods["a"], "a"))
		wantCNIError(t, "ADD", err, types.ErrTryAgainLater, "cannot reach apiary-agent at "+socket)
	})

	agent := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+filepath.Join(dir, "state"),
		"--datapath-netns="+node, "--pod-cidr=10.0.1.0/24", "--node-name=node-a", "--node-ip=192.0.2.10",
		"--prometheus-serve-addr=", "--write-cni-conf-when-ready="+agentConf)
	agent.waitStarted(t)
	t.Run("conflist written when ready", func(t *testing.T) {
		celltest.Eventually(t, "the agent writes "+agentConf, func() bool {
			_, err := os.Stat(agentConf)
			return err == nil
		})
		list, err := libcni.ConfListFromFile(agentConf)
		if err != nil {
			t.Fatal(err)
		}
		var plugin struct {
			Type       string `json:"type"`
			SocketPath string `json:"socket-path"`
		}
		if err := json.Unmarshal(list.Plugins[0].Bytes, &plugin); err != nil || list.CNIVersion != "1.1.0" ||
			plugin.Type != "apiary-cni" || plugin.SocketPath != socket {
			t.Fatalf("conflist the agent wrote: %s (%v)", list.Bytes, err)
		}
	})
	if err := n.cni.GetStatusNetworkList(ctx, n.list); err != nil {
		t.Fatalf("STATUS with the agent running: %v", err)
	}

	res := map[string]*types100.Result{}
	for _, app := range []string{"a", "b"} {
		rt := podRuntimeConf("pod-"+app, pods[app], app)
		res[app] = n.add(t, rt)
		checkResult(t, res[app], pods[app])
		if err := n.cni.CheckNetworkList(ctx, n.list, rt); err != nil {
			t.Fatalf("CHECK pod-%s: %v", app, err)
		}
	}
	t.Run("ADD again gives the same result", func(t *testing.T) {
		again := n.add(t, podRuntimeConf("pod-a", pods["a"], "a"))
		first, _ := json.Marshal(res["a"])
		second, _ := json.Marshal(again)
		if string(first) != string(second) {
			t.Fatalf("second ADD:\n%s\nfirst:\n%s", second, first)
		}
		c := client.New(socket)
		defer c.Close()
		if eps, err := c.Endpoints(ctx); err != nil || len(eps) != 2 || eps[0].ContainerID == "" {
			t.Fatalf("endpoints after three ADDs of two pods: %+v %v", eps, err)
		}
	})

	t.Run("policy", func(t *testing.T) {
		c := client.New(socket)
		defer c.Close()
		rev, err := c.PolicyPut(ctx, []byte(cniPolicy))
		if err != nil {
			t.Fatalf("import policy: %v", err)
		}
		waitEnforced(t, c, "pod-b", rev)
		ipB := res["b"].IPs[0].Address.IP
		addrB, _ := netip.AddrFromSlice(ipB.To4())
		for _, port := range []int{8080, 9090} {
			stop, err := netnstest.Echo(pods["b"], addrB, port)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
		}
		if err := netnstest.Dial(pods["a"], addrB, 8080, 5*time.Second); err != nil {
			t.Errorf("a to b on 8080/TCP, allowed by the policy: %v", err)
		}
		if err := netnstest.Dial(pods["a"], addrB, 9090, 700*time.Millisecond); err == nil {
			t.Errorf("a reached b on 9090/TCP, the policy allows only 8080")
		}
	})

	t.Run("CHECK notices a missing address", func(t *testing.T) {
		addr := res["a"].IPs[0].Address
		netnstest.Must(t, pods["a"], func() error {
			l, err := netlink.LinkByName("eth0")
			if err != nil {
				return err
			}
			return netlink.AddrDel(l, &netlink.Addr{IPNet: &addr})
		})
		err := n.cni.CheckNetworkList(ctx, n.list, podRuntimeConf("pod-a", pods["a"], "a"))
		wantCNIError(t, "CHECK", err, types.ErrInternal, "eth0 has no address "+addr.String())
	})

	t.Run("GC", func(t *testing.T) {
		c := client.New(socket)
		defer c.Close()
		// An endpoint of a container the runtime forgot (its DEL was
		// lost), and one made through the API, not by a runtime.
		stale := netnstest.New(t, "apiary-pod")
		for id, container := range map[uint16]string{4001: "pod-lost", 4002: ""} {
			if _, err := c.EndpointPut(ctx, id, models.EndpointRequest{NetNSPath: stale, InterfaceName: fmt.Sprintf("eth%d", id%2),
				Labels: []string{"app=stale"}, ContainerID: container}); err != nil {
				t.Fatal(err)
			}
		}
		valid := []types.GCAttachment{{ContainerID: "pod-a", IfName: "eth0"}, {ContainerID: "pod-b", IfName: "eth0"}}
		if err := n.cni.GCNetworkList(ctx, n.list, &libcni.GCArgs{ValidAttachments: valid}); err != nil {
			t.Fatalf("GC: %v", err)
		}
		eps, err := c.Endpoints(ctx)
		var left []string
		for _, ep := range eps {
			left = append(left, fmt.Sprintf("%d:%s", ep.ID, ep.ContainerID))
		}
		if err != nil || len(eps) != 3 || slices.ContainsFunc(eps, func(ep models.Endpoint) bool { return ep.ContainerID == "pod-lost" }) {
			t.Fatalf("endpoints after GC: %v %v; want pod-a's, pod-b's and 4002 (no container)", left, err)
		}
		if err := c.EndpointDelete(ctx, 4002); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("DEL twice", func(t *testing.T) {
		for i := range 2 {
			if err := n.cni.DelNetworkList(ctx, n.list, podRuntimeConf("pod-a", pods["a"], "a")); err != nil {
				t.Fatalf("DEL %d: %v", i+1, err)
			}
		}
		gone := podRuntimeConf("pod-b", "/var/run/netns/apiary-gone", "b")
		if err := n.cni.DelNetworkList(ctx, n.list, gone); err != nil {
			t.Fatalf("DEL of pod-b with its namespace gone: %v", err)
		}
		c := client.New(socket)
		defer c.Close()
		if eps, err := c.Endpoints(ctx); err != nil || len(eps) != 0 {
			t.Fatalf("endpoints after DEL: %+v %v", eps, err)
		}
		err := n.cni.CheckNetworkList(ctx, n.list, podRuntimeConf("pod-a", pods["a"], "a"))
		wantCNIError(t, "CHECK after DEL", err, types.ErrInternal, "has no endpoint")
	})

	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Fatalf("apiary-agent exited with %d:\n%s", code, agent.Log())
	}
	_, err := n.cni.AddNetworkList(ctx, n.list, podRuntimeConf("pod-c", pods["a"], "a"))
	wantCNIError(t, "ADD with the agent stopped", err, types.ErrTryAgainLater, "cannot reach apiary-agent at "+socket)
}

// checkResult checks a pod's ADD result: the host veth and the
// container's eth0 in its sandbox, one IPv4 address in the pod CIDR on
// it with the gateway, and the default route.
func checkResult(t *testing.T, res *types100.Result, netns string) {
	t.Helper()
	if res.CNIVersion != "1.1.0" || len(res.Interfaces) != 2 || res.Interfaces[1].Name != "eth0" ||
		res.Interfaces[1].Sandbox != netns || !strings.HasPrefix(res.Interfaces[0].Name, "lxc") || res.Interfaces[1].Mac == "" {
		t.Fatalf("result %s: want version 1.1.0, a host lxc veth and eth0 in %s", res, netns)
	}
	_, podCIDR, _ := net.ParseCIDR("10.0.1.0/24")
	if len(res.IPs) != 1 || !podCIDR.Contains(res.IPs[0].Address.IP) || res.IPs[0].Address.Mask.String() != "ffffffff" ||
		*res.IPs[0].Interface != 1 || res.IPs[0].Gateway == nil {
		t.Fatalf("result IPs %v: want one /32 of 10.0.1.0/24 on interface 1 with a gateway", res.IPs)
	}
	if len(res.Routes) != 1 || res.Routes[0].Dst.String() != "0.0.0.0/0" || !res.Routes[0].GW.Equal(res.IPs[0].Gateway) {
		t.Fatalf("result routes %v: want the default route via %s", res.Routes, res.IPs[0].Gateway)
	}
}

// waitEnforced waits until the endpoint of the container has the
// policy of revision rev in the datapath, enforcing ingress.
func waitEnforced(t *testing.T, c *client.Client, containerID string, rev uint64) {
	t.Helper()
	celltest.Eventually(t, fmt.Sprintf("endpoint of %s enforces policy revision %d", containerID, rev), func() bool {
		eps, err := c.Endpoints(context.Background())
		for _, ep := range eps {
			if err == nil && ep.ContainerID == containerID && ep.Policy.Revision >= rev && ep.Policy.IngressEnforcement {
				return true
			}
		}
		return false
	})
}

// TestCNIInstallBinaryOnly: with an empty --cni-conf-dir (the
// DaemonSet's init container) apiary-cni install copies the plugin, an
// executable identical to the built one, and writes no conflist.
func TestCNIInstallBinaryOnly(t *testing.T) {
	built := filepath.Join(cniPluginDir(t), "apiary-cni")
	binDir := filepath.Join(t.TempDir(), "bin")
	out, err := exec.Command(built, "install", "--cni-bin-dir="+binDir, "--cni-conf-dir=").CombinedOutput()
	if err != nil {
		t.Fatalf("apiary-cni install: %v\n%s", err, out)
	}
	if strings.Contains(string(out), ".conflist") {
		t.Errorf("install with an empty --cni-conf-dir says it wrote a conflist: %s", out)
	}
	want, _ := os.ReadFile(built)
	got, err := os.ReadFile(filepath.Join(binDir, "apiary-cni"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("installed plugin differs from the built one (%v)", err)
	}
	if st, err := os.Stat(filepath.Join(binDir, "apiary-cni")); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("installed plugin mode: %v %v, want 0755", st.Mode(), err)
	}
	if entries, _ := os.ReadDir(binDir); len(entries) != 1 {
		t.Fatalf("bin dir holds %d files, want the plugin only (no temporary file left)", len(entries))
	}
}

// TestCNIConfWaitsForRestore: --write-cni-conf-when-ready writes the
// conflist only once the endpoints' restore is done, which waits for the
// remote clusters (here one that never answers, until
// --clustermesh-sync-timeout).
func TestCNIConfWaitsForRestore(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	dir := t.TempDir()
	meshDir := filepath.Join(dir, "clustermesh")
	if err := os.MkdirAll(meshDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(meshDir, "c2"), []byte("endpoints:\n- http://127.0.0.1:1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "net.d", "05-apiary.conflist")
	agent := startAgent(t, agentBin, "--socket-path="+filepath.Join(dir, "apiary.sock"), "--state-dir="+filepath.Join(dir, "state"),
		"--cluster-name=c1", "--cluster-id=1", "--clustermesh-config="+meshDir, "--clustermesh-sync-timeout=8s",
		"--write-cni-conf-when-ready="+conf)
	agent.waitStarted(t)
	if _, err := os.Stat(conf); err == nil {
		t.Fatalf("the conflist exists as the agent starts, before the remote cluster's sync or its timeout:\n%s", agent.Log())
	}
	// The file appears just before the agent logs it: wait for both.
	celltest.EventuallyWithin(t, "the conflist is written after --clustermesh-sync-timeout", 30*time.Second, func() bool {
		_, err := os.Stat(conf)
		return err == nil && strings.Contains(agent.Log(), "Wrote the CNI configuration")
	})
	log := agent.Log()
	regen, wrote := strings.Index(log, "Regenerating endpoints without the remote clusters' sync"), strings.Index(log, "Wrote the CNI configuration")
	if regen < 0 || wrote < regen {
		t.Fatalf("want the endpoints' gate opening (at %d) before the conflist is written (at %d):\n%s", regen, wrote, log)
	}
	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Fatalf("apiary-agent exited with %d", code)
	}
}
