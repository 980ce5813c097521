package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestInstallConfigMap: the ConfigMap of install/kubernetes, laid out as
// Kubernetes mounts it (one file per key), is a --config-dir the agent
// takes whole: every key is a flag, every value parses, none is ignored.
func TestInstallConfigMap(t *testing.T) {
	agentBin, _ := buildBinaries(t)
	data, err := os.ReadFile("../../../install/kubernetes/configmap.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(data, &cm); err != nil || len(cm.Data) == 0 {
		t.Fatalf("configmap.yaml has no data: %v", err)
	}
	dir := t.TempDir()
	for k, v := range cm.Data {
		if err := os.WriteFile(filepath.Join(dir, k), []byte(v), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// ipam: kubernetes and identity-allocation-mode: crd need an API
	// server; the node's name and IP come from the DaemonSet and the Node
	// in a cluster. The Node is read once (nothing answers here: the
	// agent goes on without its pod CIDRs).
	outb, err := exec.Command(agentBin, "hive", "--config-dir="+dir, "--k8s-api-server=https://127.0.0.1:1",
		"--node-name=node-a", "--node-ip=192.0.2.10").CombinedOutput()
	out := string(outb)
	if err != nil {
		t.Fatalf("apiary-agent hive --config-dir: %v\n%s", err, out)
	}
	if strings.Contains(out, "Ignored --config-dir files") {
		t.Errorf("the agent ignores ConfigMap keys:\n%s", out)
	}
	for k, v := range cm.Data {
		if want := "--" + k + "=" + v + " (config-dir)"; !strings.Contains(out, want) {
			t.Errorf("apiary-agent hive does not show %s", want)
		}
	}
}
