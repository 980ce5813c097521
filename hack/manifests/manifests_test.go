package manifests_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	yamlv3 "go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apiary-net/apiary/hack/manifests"
)

// root is the repository root, from this module's directory.
const root = "../.."

func loadInstall(t *testing.T) []manifests.Object {
	t.Helper()
	objs, err := manifests.LoadInstall(filepath.Join(root, manifests.InstallDir))
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestCRDsAreGenerated(t *testing.T) {
	for _, crd := range manifests.CRDs() {
		want, err := manifests.RenderCRD(crd)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, manifests.CRDDir, manifests.CRDFile(crd))
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what hack/manifests/schema.go generates (%v): run `make manifests-gen`", path, err)
		}
	}
}

func TestInstallObjects(t *testing.T) {
	var kinds []string
	for _, o := range loadInstall(t) {
		kinds = append(kinds, o.Kind)
	}
	slices.Sort(kinds)
	want := []string{
		"apiextensions.k8s.io/v1 CustomResourceDefinition", "apiextensions.k8s.io/v1 CustomResourceDefinition",
		"apiextensions.k8s.io/v1 CustomResourceDefinition", "apiextensions.k8s.io/v1 CustomResourceDefinition",
		"apps/v1 DaemonSet", "rbac.authorization.k8s.io/v1 ClusterRole", "rbac.authorization.k8s.io/v1 ClusterRoleBinding",
		"v1 ConfigMap", "v1 ServiceAccount",
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("install objects %v, want %v", kinds, want)
	}
}

func TestStrictDecodeRefusesUnknownFields(t *testing.T) {
	dir := t.TempDir()
	bad := "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      hostNetwrok: true\n"
	if err := os.WriteFile(filepath.Join(dir, "ds.yaml"), []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := manifests.LoadInstall(dir)
	if err == nil || !strings.Contains(err.Error(), `unknown field "hostNetwrok"`) {
		t.Fatalf("decode of a misspelt field: %v, want an unknown field error naming it", err)
	}
}

func TestCRDsPassAPIServerValidation(t *testing.T) {
	for _, o := range loadInstall(t) {
		crd, ok := o.Value.(*apiextv1.CustomResourceDefinition)
		if !ok {
			continue
		}
		errs, err := manifests.ValidateCRD(crd)
		if err != nil {
			t.Fatal(err)
		}
		if len(errs) > 0 {
			t.Errorf("%s: %v", crd.Name, errs.ToAggregate())
		}
		v := crd.Spec.Versions[0]
		// Cilium's CiliumEndpoint has no status subresource: the agent
		// writes the status with the object.
		wantStatus := crd.Name != "ciliumendpoints.cilium.io"
		if crd.Spec.Group != "cilium.io" || v.Name != "v2" || v.Subresources == nil || (v.Subresources.Status != nil) != wantStatus {
			t.Errorf("%s: want cilium.io/v2, with a status subresource: %v", crd.Name, wantStatus)
		}
	}
}

// TestDaemonSet checks what the agent needs from its pod.
func TestDaemonSet(t *testing.T) {
	for _, o := range loadInstall(t) {
		ds, ok := o.Value.(*appsv1.DaemonSet)
		if !ok {
			continue
		}
		spec := ds.Spec.Template.Spec
		if !spec.HostNetwork || spec.ServiceAccountName != "apiary-agent" || len(spec.Containers) != 1 || len(spec.InitContainers) != 2 ||
			spec.InitContainers[0].Name != "mount-bpf-fs" || spec.InitContainers[1].Name != "install-cni" {
			t.Fatalf("DaemonSet: want hostNetwork, the apiary-agent service account, one agent and the init containers mount-bpf-fs, install-cni")
		}
		agent, mountBPF, installCNI := spec.Containers[0], spec.InitContainers[0], spec.InitContainers[1]
		checkDaemonSetContainers(t, spec)
		if c := mountBPF.Command; !slices.Equal(c, []string{"/usr/local/bin/apiary-agent", "mount-bpf-fs", "--path=/sys/fs/bpf"}) {
			t.Errorf("mount-bpf-fs command %v", c)
		}
		if len(mountBPF.VolumeMounts) != 1 || mountBPF.VolumeMounts[0].MountPath != "/sys/fs/bpf" ||
			mountBPF.VolumeMounts[0].MountPropagation == nil || *mountBPF.VolumeMounts[0].MountPropagation != corev1.MountPropagationBidirectional {
			t.Errorf("mount-bpf-fs mounts %+v, want the host's /sys/fs/bpf with Bidirectional propagation", mountBPF.VolumeMounts)
		}
		if agent.SecurityContext == nil || agent.SecurityContext.Privileged == nil || !*agent.SecurityContext.Privileged {
			t.Error("the agent container is not privileged")
		}
		paths := map[string]string{}
		for _, v := range spec.Volumes {
			switch {
			case v.HostPath != nil:
				paths[v.Name] = v.HostPath.Path
			case v.ConfigMap != nil:
				paths[v.Name] = "configmap:" + v.ConfigMap.Name
			}
		}
		mounted := map[string]string{}
		for _, c := range append(spec.InitContainers, spec.Containers...) {
			for _, m := range c.VolumeMounts {
				mounted[paths[m.Name]] = m.MountPath
			}
		}
		for host, in := range map[string]string{"/sys/fs/bpf": "/sys/fs/bpf", "/opt/cni/bin": "/host/opt/cni/bin",
			"/etc/cni/net.d": "/host/etc/cni/net.d", "/var/run/apiary": "/var/run/apiary", "configmap:apiary-config": "/etc/apiary/config",
			"/sys/fs/cgroup": "/host/sys/fs/cgroup"} {
			if mounted[host] != in {
				t.Errorf("%s is mounted at %q, want %s", host, mounted[host], in)
			}
		}
		// The agent writes the conflist (--write-cni-conf-when-ready in
		// the ConfigMap) into the host's CNI conf dir; the init container
		// installs the binary only.
		if !slices.ContainsFunc(agent.VolumeMounts, func(m corev1.VolumeMount) bool {
			return paths[m.Name] == "/etc/cni/net.d" && m.MountPath == "/host/etc/cni/net.d"
		}) {
			t.Error("the agent container does not mount the host's /etc/cni/net.d at /host/etc/cni/net.d")
		}
		if !slices.Contains(installCNI.Command, "--cni-conf-dir=") {
			t.Errorf("init container command %v writes a conflist; the agent writes it when ready", installCNI.Command)
		}
		if !slices.Contains(agent.Command, "--config-dir=/etc/apiary/config") {
			t.Errorf("agent command %v has no --config-dir", agent.Command)
		}
		if c := installCNI.Command; len(c) < 2 || c[1] != "install" {
			t.Errorf("init container command %v, want apiary-cni install", c)
		}
	}
}

// checkDaemonSetContainers: every container runs the one image (the
// reference `make image` tags) as root (the image's default user is
// nonroot), and takes nothing per node but values of the downward API.
func checkDaemonSetContainers(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		if c.Image != spec.Containers[0].Image {
			t.Errorf("container %s runs %s, the agent %s: one image holds all", c.Name, c.Image, spec.Containers[0].Image)
		}
		if sc := c.SecurityContext; sc == nil || sc.RunAsUser == nil || *sc.RunAsUser != 0 {
			t.Errorf("container %s does not set runAsUser: 0 (the image's default user is 65532)", c.Name)
		}
		for _, e := range c.Env {
			if e.ValueFrom == nil || e.ValueFrom.FieldRef == nil {
				t.Errorf("container %s: env %s is not from the downward API: a per-node setting in the manifest", c.Name, e.Name)
			}
		}
	}
	if env := spec.Containers[0].Env; len(env) != 1 || env[0].Name != "APIARY_NODE_NAME" || env[0].ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("agent env %+v, want APIARY_NODE_NAME from spec.nodeName only (addresses and pod CIDRs come from the Node)", env)
	}
}

// TestConfigMapIPAM: the shipped ConfigMap takes the pod CIDRs from the
// Node objects, sets no per-node value, serves metrics on apiary's port,
// not cilium-agent's 9962, and points the socket-level balancer to the
// host's cgroup2.
func TestConfigMapIPAM(t *testing.T) {
	for _, o := range loadInstall(t) {
		cm, ok := o.Value.(*corev1.ConfigMap)
		if !ok || cm.Name != "apiary-config" {
			continue
		}
		if cm.Data["ipam"] != "kubernetes" {
			t.Errorf("ipam: %q, want kubernetes", cm.Data["ipam"])
		}
		if cm.Data["prometheus-serve-addr"] != ":9972" {
			t.Errorf("prometheus-serve-addr: %q, want :9972", cm.Data["prometheus-serve-addr"])
		}
		// The socket-level balancer (kube-proxy-replacement) attaches to
		// the host's cgroup2, which the DaemonSet mounts there: the
		// container's own /sys/fs/cgroup holds the agent only.
		if cm.Data["cgroup-root"] != "/host/sys/fs/cgroup" || cm.Data["kube-proxy-replacement"] != "false" {
			t.Errorf("cgroup-root %q, kube-proxy-replacement %q: want /host/sys/fs/cgroup (the DaemonSet's mount of the host's) and the switch, off",
				cm.Data["cgroup-root"], cm.Data["kube-proxy-replacement"])
		}
		for _, k := range []string{"node-name", "node-ip", "pod-cidr"} {
			if _, ok := cm.Data[k]; ok {
				t.Errorf("the ConfigMap sets %s: a per-node value for every node", k)
			}
		}
		return
	}
	t.Fatal("no ConfigMap apiary-config")
}

// TestClusterRoleIsLeastPrivilege pins the agent's permissions: reading
// what it watches; writing only what identity allocation mode crd needs
// (CiliumIdentities, this node's CiliumEndpoints, the identity GC's
// Lease, by name once it exists).
func TestClusterRoleIsLeastPrivilege(t *testing.T) {
	var got []string
	for _, o := range loadInstall(t) {
		cr, ok := o.Value.(*rbacv1.ClusterRole)
		if !ok {
			continue
		}
		for _, r := range cr.Rules {
			if len(r.NonResourceURLs) > 0 {
				t.Errorf("unexpected rule %+v", r)
			}
			names := ""
			if len(r.ResourceNames) > 0 {
				names = "[" + strings.Join(r.ResourceNames, ",") + "]"
			}
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					got = append(got, fmt.Sprintf("%s/%s%s: %s", g, res, names, strings.Join(r.Verbs, ",")))
				}
			}
		}
	}
	slices.Sort(got)
	want := []string{
		"/namespaces: get,list,watch", "/nodes: get,list,watch", "/pods: get,list,watch", "/services: get,list,watch",
		"cilium.io/ciliumclusterwidenetworkpolicies: get,list,watch",
		"cilium.io/ciliumendpoints: get,list,watch,create,update,delete",
		"cilium.io/ciliumidentities: get,list,watch,create,update,patch,delete",
		"cilium.io/ciliumnetworkpolicies: get,list,watch",
		"coordination.k8s.io/leases: create", "coordination.k8s.io/leases[apiary-identity-gc]: get,update",
		"discovery.k8s.io/endpointslices: get,list,watch", "networking.k8s.io/networkpolicies: get,list,watch",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ClusterRole grants\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// policyKinds are the kinds the CRDs define.
var policyKinds = map[string]bool{"CiliumNetworkPolicy": true, "CiliumClusterwideNetworkPolicy": true}

// policyObjects finds every CNP and CCNP in the policy test data (at any
// depth: scenarios nest them), each with where it came from.
func policyObjects(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	err := filepath.WalkDir(filepath.Join(root, "policy"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(path, "testdata") || strings.Contains(path, "/fuzz/") {
			return err
		}
		if ext := filepath.Ext(path); ext != ".yaml" && ext != ".yml" && ext != ".json" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dec := yamlv3.NewDecoder(bytes.NewReader(data))
		for i := 0; ; i++ {
			var doc any
			if dec.Decode(&doc) != nil {
				break // the end, or a document the policy tests feed as malformed
			}
			collect(doc, fmt.Sprintf("%s#%d", strings.TrimPrefix(path, root+"/"), i), out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func collect(v any, where string, out map[string]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if k, _ := v["kind"].(string); policyKinds[k] {
			if api, _ := v["apiVersion"].(string); api == "cilium.io/v2" {
				out[fmt.Sprintf("%s %s", where, name(v))] = v
				return
			}
		}
		for k, c := range v {
			collect(c, where+"."+k, out)
		}
	case []any:
		for i, c := range v {
			collect(c, fmt.Sprintf("%s[%d]", where, i), out)
		}
	}
}

func name(obj map[string]any) string {
	md, _ := obj["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return fmt.Sprintf("%s/%s", obj["kind"], n)
}

// knownRefusals are test data policies the API server refuses with the
// CRD, on purpose: they test the agent's own errors for input a file or
// the API gives it.
var knownRefusals = map[string]string{}

// TestPolicyTestDataValidates: every CNP and CCNP of the policy test
// data (Cilium's examples among them) passes the API server's pruning
// and schema validation against the CRDs; fields outside the schema
// (Cilium's CRD drops them too, kubectl warns) are only a description
// beside spec.
func TestPolicyTestDataValidates(t *testing.T) {
	validators := map[string]*manifests.Validator{}
	for _, crd := range manifests.CRDs() {
		v, err := manifests.NewValidator(crd)
		if err != nil {
			t.Fatal(err)
		}
		validators[crd.Spec.Names.Kind] = v
	}
	objs := policyObjects(t)
	if len(objs) < 20 {
		t.Fatalf("found %d CNP/CCNP objects in policy test data, want at least 20", len(objs))
	}
	for where, obj := range objs {
		t.Run(where, func(t *testing.T) {
			obj = roundTrip(t, obj)
			pruned, errs := validators[obj["kind"].(string)].Validate(obj)
			if reason, ok := knownRefusals[where]; ok {
				if len(errs) == 0 {
					t.Fatalf("validates, but is listed as refused (%s)", reason)
				}
				return
			}
			if len(errs) > 0 {
				t.Errorf("refused: %v", errs.ToAggregate())
			}
			for _, p := range pruned {
				if p != "description" {
					t.Errorf("field %s is not in the schema (pruned)", p)
				}
			}
		})
	}
}

// TestSchemaRefuses: the schema is not open where Cilium's is not.
func TestSchemaRefuses(t *testing.T) {
	v, err := manifests.NewValidator(manifests.CRDs()[0])
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, give, want string
	}{
		{"bad protocol", `{"endpointSelector": {}, "ingress": [{"toPorts": [{"ports": [{"port": "80", "protocol": "TCPX"}]}]}]}`,
			"spec.ingress[0].toPorts[0].ports[0].protocol"},
		{"bad entity", `{"endpointSelector": {}, "egress": [{"toEntities": ["everything"]}]}`, "spec.egress[0].toEntities[0]"},
		{"bad CIDR", `{"endpointSelector": {}, "egress": [{"toCIDR": ["10.0.0.0/8 x"]}]}`, "spec.egress[0].toCIDR[0]"},
		{"port as a number", `{"endpointSelector": {}, "ingress": [{"toPorts": [{"ports": [{"port": 80}]}]}]}`, "spec.ingress[0].toPorts[0].ports[0].port"},
		{"selector operator", `{"endpointSelector": {"matchExpressions": [{"key": "a", "operator": "Is"}]}}`, "spec.endpointSelector.matchExpressions[0].operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var spec map[string]any
			if err := json.Unmarshal([]byte(tt.give), &spec); err != nil {
				t.Fatal(err)
			}
			obj := map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy", "metadata": map[string]any{"name": "x"}, "spec": spec}
			_, errs := v.Validate(obj)
			if len(errs) == 0 || !strings.Contains(errs.ToAggregate().Error(), tt.want) {
				t.Fatalf("errors %v, want one naming %s", errs.ToAggregate(), tt.want)
			}
		})
	}
	t.Run("L7 rules pass through", func(t *testing.T) {
		var spec map[string]any
		_ = json.Unmarshal([]byte(`{"endpointSelector": {}, "ingress": [{"toPorts": [{"ports": [{"port": "80", "protocol": "TCP"}], "rules": {"http": [{"method": "GET", "path": "/"}]}}]}]}`), &spec)
		obj := map[string]any{"apiVersion": "cilium.io/v2", "kind": "CiliumNetworkPolicy", "metadata": map[string]any{"name": "x"}, "spec": spec}
		if pruned, errs := v.Validate(obj); len(errs) > 0 || len(pruned) > 0 {
			t.Fatalf("L7 rules: pruned %v, errors %v", pruned, errs.ToAggregate())
		}
	})
}

// roundTrip makes obj what the API server decodes from JSON (YAML gives
// ints and nested map types JSON does not).
func roundTrip(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
