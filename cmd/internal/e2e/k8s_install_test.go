package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/k8s/k8stest"
)

// installDir is the repository's install/kubernetes, from the package's
// directory.
const installDir = "../../../install/kubernetes"

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// readManifests decodes every object of the *.yaml files of dir (one or
// more documents each), in file order.
func readManifests(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifest in %s (%v)", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("read %s: %v", f, err)
			}
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("decode %s: %v", f, err)
			}
			if len(obj) == 0 {
				continue // only comments
			}
			objs = append(objs, &unstructured.Unstructured{Object: obj})
		}
	}
	return objs
}

// applyInstall creates every object of install/kubernetes on srv as an
// administrator would apply them: the CRDs of crds/ first (waiting until
// each is Established), then the rest, each through the dynamic client
// at the resource the server's discovery maps its kind to. It returns
// the objects it created (the CRDs excluded).
func applyInstall(t *testing.T, srv *k8stest.Server) []*unstructured.Unstructured {
	t.Helper()
	ctx := context.Background()
	dyn := srv.Dynamic()
	crds := readManifests(t, filepath.Join(installDir, "crds"))
	for _, crd := range crds {
		if crd.GetKind() != "CustomResourceDefinition" {
			t.Fatalf("crds/ holds a %s", crd.GetKind())
		}
		if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{FieldManager: "apiary-e2e"}); err != nil {
			t.Fatalf("create CRD %s: %v", crd.GetName(), err)
		}
	}
	for _, crd := range crds {
		celltest.EventuallyWithin(t, "CRD "+crd.GetName()+" is Established", time.Minute, func() bool {
			got, err := dyn.Resource(crdGVR).Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			return slices.ContainsFunc(conds, func(c any) bool {
				m, _ := c.(map[string]any)
				return m["type"] == "Established" && m["status"] == "True"
			})
		})
	}
	// The namespaces the API server creates itself may not exist yet.
	cs := srv.Clientset()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kube-system"}},
		metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(cs.Discovery()))
	objs := readManifests(t, installDir)
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("map %s: %v", gvk, err)
		}
		ri := dyn.Resource(m.Resource)
		if ns := obj.GetNamespace(); ns != "" {
			if _, err := dyn.Resource(m.Resource).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{FieldManager: "apiary-e2e"}); err != nil {
				t.Fatalf("create %s %s/%s: %v", gvk.Kind, ns, obj.GetName(), err)
			}
			continue
		}
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: "apiary-e2e"}); err != nil {
			t.Fatalf("create %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
	return objs
}

// installedAgent is apiary-agent started as the DaemonSet would start it
// outside a pod: the ConfigMap's data as --config-dir (read back from the
// API server), the service account's token in a kubeconfig, and flags
// for what only makes sense in a pod (paths, the metrics port, the node
// name the DaemonSet's environment gives). Its Node, node-a, is created
// as kubelet registers it, with the InternalIP 192.0.2.10 the agent
// takes as node IP (ipam: kubernetes) and no pod CIDRs yet.
type installedAgent struct {
	socket string
	args   []string
}

func newInstalledAgent(t *testing.T, srv *k8stest.Server, extra ...string) *installedAgent {
	t.Helper()
	cm, err := srv.Clientset().CoreV1().ConfigMaps("kube-system").Get(context.Background(), "apiary-config", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the installed ConfigMap: %v", err)
	}
	dir := t.TempDir()
	confDir := filepath.Join(dir, "config")
	if err := os.MkdirAll(confDir, 0o750); err != nil {
		t.Fatal(err)
	}
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(confDir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	createNode(t, srv, "node-a", "192.0.2.10")
	token := srv.ServiceAccountToken("kube-system", "apiary-agent")
	a := &installedAgent{socket: filepath.Join(dir, "run", "apiary.sock")}
	a.args = append([]string{"--config-dir=" + confDir, "--k8s-kubeconfig-path=" + srv.WriteKubeconfig(token),
		"--socket-path=" + a.socket, "--state-dir=" + filepath.Join(dir, "run"), "--prometheus-serve-addr=",
		"--hubble-socket-path=" + filepath.Join(dir, "run", "hubble.sock"),
		"--write-cni-conf-when-ready=" + filepath.Join(dir, "net.d", "05-apiary.conflist"),
		"--node-name=node-a"}, extra...)
	return a
}

// createNode creates a Node with an InternalIP, as kubelet registers it.
func createNode(t *testing.T, srv *k8stest.Server, name, ip string) {
	t.Helper()
	ctx := context.Background()
	nodes := srv.Clientset().CoreV1().Nodes()
	n, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}, {Type: corev1.NodeHostName, Address: name}}
	if _, err := nodes.UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("node %s status: %v", name, err)
	}
}

// k8sStatusEntry returns the agent's status entry name, from the API.
func k8sStatusEntry(t *testing.T, socket, name string) (models.StatusEntry, bool) {
	t.Helper()
	c := client.New(socket)
	defer c.Close()
	st, err := c.Status(context.Background())
	if err != nil {
		return models.StatusEntry{}, false
	}
	i := slices.IndexFunc(st.Entries, func(e models.StatusEntry) bool { return e.Name == name })
	if i < 0 {
		return models.StatusEntry{}, false
	}
	return st.Entries[i], true
}

// k8sAPIs are APIs the agent lists and watches (at least).
var k8sAPIs = []string{"core/v1::Pods", "core/v1::Namespace", "core/v1::Node", "networking.k8s.io/v1::NetworkPolicy",
	"cilium/v2::CiliumNetworkPolicy", "cilium/v2::CiliumClusterwideNetworkPolicy"}

// waitK8sSynced waits until the agent's status says Kubernetes is Ok with
// its caches synced and every API of k8sAPIs listed and working.
func waitK8sSynced(t *testing.T, a *agentProcess, socket string) {
	t.Helper()
	var server, apis models.StatusEntry
	ok := waitFor(time.Minute, func() bool {
		var ok1, ok2 bool
		server, ok1 = k8sStatusEntry(t, socket, "Kubernetes")
		apis, ok2 = k8sStatusEntry(t, socket, "Kubernetes APIs")
		return ok1 && ok2 && server.State == models.StateOk && slices.Contains(server.Details, "caches synced") &&
			apis.State == models.StateOk && len(apis.Details) == 0
	})
	if !ok {
		t.Fatalf("status: Kubernetes %+v; Kubernetes APIs %+v; want Ok, caches synced, no failing API\n%s", server, apis, a.Log())
	}
	for _, api := range k8sAPIs {
		if !strings.Contains(apis.Message, fmt.Sprintf("%q", api)) {
			t.Errorf("Kubernetes APIs %q does not list %s", apis.Message, api)
		}
	}
}

// TestInstallRBAC applies install/kubernetes to a real kube-apiserver
// (RBAC on) and runs apiary-agent with the ConfigMap's settings as the
// manifests' service account: Kubernetes is Ok, every API syncs and
// nothing is forbidden. Without the "watch" verb of NetworkPolicies in
// the ClusterRole (client-go lists through a watch with initial events,
// so "list" alone goes unnoticed), the status names that resource as forbidden.
func TestInstallRBAC(t *testing.T) {
	agentBin, cliBin := buildBinaries(t)
	srv := k8stest.Start(t)
	objs := applyInstall(t, srv)
	kinds := map[string]bool{}
	for _, o := range objs {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap", "DaemonSet"} {
		if !kinds[k] {
			t.Errorf("install/kubernetes has no %s", k)
		}
	}
	inst := newInstalledAgent(t, srv)
	agent := startAgent(t, agentBin, inst.args...)
	agent.waitStarted(t)
	waitK8sSynced(t, agent, inst.socket)
	_, out, _ := runCLI(t, cliBin, inst.socket, "status")
	// ipam: kubernetes, and no controller manager gives node-a a CIDR.
	if !regexp.MustCompile(`(?m)^IPAM: +Warning +Waiting for spec\.podCIDRs of node node-a$`).MatchString(out) {
		t.Errorf("apiary status has no \"IPAM: Warning Waiting for spec.podCIDRs of node node-a\" line:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^Kubernetes: +Ok +1\.35 \(v1\.35\.\d+\)`).MatchString(out) {
		t.Errorf("apiary status has no \"Kubernetes: Ok 1.35 (v1.35.x)\" line:\n%s", out)
	}
	agent.terminate(t)
	if code := agent.wait(t); code != 0 {
		t.Fatalf("apiary-agent exited with %d:\n%s", code, agent.Log())
	}
	if log := agent.Log(); strings.Contains(strings.ToLower(log), "forbidden") {
		t.Fatalf("the agent's log says forbidden:\n%s", log)
	}

	t.Run("a verb less is forbidden", func(t *testing.T) {
		ctx := context.Background()
		roles := srv.Clientset().RbacV1().ClusterRoles()
		role, err := roles.Get(ctx, "apiary-agent", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !dropVerb(role, "networking.k8s.io", "networkpolicies", "watch") {
			t.Fatalf("the ClusterRole has no watch of networkpolicies: %+v", role.Rules)
		}
		if _, err := roles.Update(ctx, role, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		agent := startAgent(t, agentBin, inst.args...)
		agent.waitStarted(t)
		var apis models.StatusEntry
		want := "list and watch networking.k8s.io/v1::NetworkPolicy: forbidden (RBAC)"
		if !waitFor(time.Minute, func() bool {
			apis, _ = k8sStatusEntry(t, inst.socket, "Kubernetes APIs")
			return apis.State == models.StateWarning && slices.ContainsFunc(apis.Details, func(d string) bool {
				return strings.HasPrefix(d, want)
			})
		}) {
			t.Fatalf("Kubernetes APIs %+v; want a Warning saying %q\n%s", apis, want, agent.Log())
		}
		if len(apis.Details) != 1 {
			t.Errorf("Kubernetes APIs details %q: want NetworkPolicy's only", apis.Details)
		}
		agent.terminate(t)
		if code := agent.wait(t); code != 0 {
			t.Fatalf("apiary-agent exited with %d:\n%s", code, agent.Log())
		}
	})
}

// dropVerb removes verb from the rule of group and resource, splitting
// the rule so that its other resources keep it, and says whether it was
// there.
func dropVerb(role *rbacv1.ClusterRole, group, resource, verb string) bool {
	for i, r := range role.Rules {
		if !slices.Contains(r.APIGroups, group) || !slices.Contains(r.Resources, resource) || !slices.Contains(r.Verbs, verb) {
			continue
		}
		rest := slices.DeleteFunc(slices.Clone(r.Resources), func(s string) bool { return s == resource })
		less := r.DeepCopy()
		less.Resources = []string{resource}
		less.Verbs = slices.DeleteFunc(slices.Clone(r.Verbs), func(s string) bool { return s == verb })
		role.Rules[i].Resources = rest
		if len(rest) == 0 {
			role.Rules[i] = *less
		} else {
			role.Rules = append(role.Rules, *less)
		}
		return true
	}
	return false
}

// waitFor polls cond (a status request: every 100ms) until it holds or
// timeout passes, and says whether it held; the caller fails with what
// it saw last.
func waitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}
