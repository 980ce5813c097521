package e2e_test

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// TestCNItool runs docs/cni.md's example with the reference cnitool
// (containernetworking/cni, the version go.mod requires): labels in the
// CNI conventions' args.cni.labels of the network configuration, ADD
// then DEL. It also shows why the docs do not pass labels in CNI_ARGS:
// cnitool refuses a pair whose value holds '='.
func TestCNItool(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	cnitool := buildCNItool(t)
	dir := t.TempDir()
	socket := filepath.Join(dir, "run", "apiary.sock")
	node := netnstest.New(t, "apiary-node")
	pod := netnstest.New(t, "apiary-pod")
	binDir, confDir := filepath.Join(dir, "bin"), filepath.Join(dir, "net.d")
	install := exec.Command(filepath.Join(cniPluginDir(t), "apiary-cni"), "install", "--cni-bin-dir="+binDir,
		"--cni-conf-dir="+confDir, "--socket-path="+socket)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("apiary-cni install: %v\n%s", err, out)
	}
	addConventionLabels(t, filepath.Join(confDir, "05-apiary.conflist"), map[string]string{"app": "web", "tier": "front"})
	agent := startAgent(t, agentBin, "--socket-path="+socket, "--state-dir="+filepath.Join(dir, "state"),
		"--datapath-netns="+node, "--pod-cidr=10.0.3.0/24", "--node-name=node-a", "--node-ip=192.0.2.10",
		"--prometheus-serve-addr=")
	agent.waitStarted(t)

	run := func(cniArgs string, args ...string) (string, error) {
		cmd := exec.Command(cnitool, args...)
		cmd.Env = append(os.Environ(), "CNI_PATH="+binDir, "NETCONFPATH="+confDir, "CNI_ARGS="+cniArgs)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("APIARY_LABELS=app=web", "add", "apiary", pod); err == nil || !strings.Contains(out, "invalid CNI_ARGS pair") {
		t.Fatalf("cnitool with APIARY_LABELS=app=web: %v\n%s\nwant cnitool's own refusal", err, out)
	}
	if out, err := run("", "add", "apiary", pod); err != nil {
		t.Fatalf("cnitool add: %v\n%s", err, out)
	}
	c := client.New(socket)
	defer c.Close()
	eps, err := c.Endpoints(context.Background())
	if err != nil || len(eps) != 1 {
		t.Fatalf("endpoints after cnitool add: %+v %v", eps, err)
	}
	for _, want := range []string{"k8s:app=web", "k8s:tier=front"} {
		if !slices.Contains(eps[0].Labels, want) {
			t.Errorf("endpoint labels %v lack %s", eps[0].Labels, want)
		}
	}
	if out, err := run("", "del", "apiary", pod); err != nil {
		t.Fatalf("cnitool del: %v\n%s", err, out)
	}
	if eps, err := c.Endpoints(context.Background()); err != nil || len(eps) != 0 {
		t.Fatalf("endpoints after cnitool del: %+v %v", eps, err)
	}
}

// addConventionLabels puts labels into the plugin entry of a conflist as
// the CNI conventions' args.cni.labels.
func addConventionLabels(t *testing.T, path string, labels map[string]string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var list map[string]any
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var ls []map[string]string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		ls = append(ls, map[string]string{"key": k, "value": labels[k]})
	}
	plugin := list["plugins"].([]any)[0].(map[string]any)
	plugin["args"] = map[string]any{"cni": map[string]any{"labels": ls}}
	if data, err = json.MarshalIndent(list, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// buildCNItool builds the reference cnitool of the containernetworking/cni
// module go.mod requires.
func buildCNItool(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cnitool")
	build := exec.Command("go", "build", "-o", bin, "github.com/containernetworking/cni/cnitool")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cnitool: %v\n%s", err, out)
	}
	return bin
}
