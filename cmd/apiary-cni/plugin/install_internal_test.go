package plugin

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInstallFromEnvIsIdempotent: apiary-cni install takes its
// directories from APIARY_CNI_* when no flag gives them, writes the
// plugin and the conflist, and a second run replaces neither (same
// inode: a runtime reading them meanwhile is not disturbed).
func TestInstallFromEnvIsIdempotent(t *testing.T) {
	dir := t.TempDir()
	bin, conf := filepath.Join(dir, "bin"), filepath.Join(dir, "net.d")
	t.Setenv("APIARY_CNI_BIN_DIR", bin)
	t.Setenv("APIARY_CNI_CONF_DIR", conf)
	t.Setenv("APIARY_SOCKET_PATH", "/run/apiary/apiary.sock")
	var stderr bytes.Buffer
	if code := runInstall([]string{"--cni-conf-name=10-test.conflist"}, &stderr); code != 0 {
		t.Fatalf("install = %d: %s", code, stderr.String())
	}
	plugin, list := filepath.Join(bin, PluginType), filepath.Join(conf, "10-test.conflist")
	data, err := os.ReadFile(list)
	if err != nil || !strings.Contains(string(data), `"socket-path": "/run/apiary/apiary.sock"`) {
		t.Fatalf("conflist %s: %v", data, err)
	}
	before := map[string]os.FileInfo{}
	for _, p := range []string{plugin, list} {
		if before[p], err = os.Stat(p); err != nil {
			t.Fatal(err)
		}
	}
	if code := runInstall([]string{"--cni-conf-name=10-test.conflist"}, &stderr); code != 0 {
		t.Fatalf("install again = %d: %s", code, stderr.String())
	}
	for p, st := range before {
		now, err := os.Stat(p)
		if err != nil || !os.SameFile(st, now) {
			t.Errorf("%s was replaced by a second install", p)
		}
	}

	t.Setenv("APIARY_CNI_CONF_DIR", "")
	other := filepath.Join(dir, "bin2")
	if code := runInstall([]string{"--cni-bin-dir=" + other}, &stderr); code != 0 {
		t.Fatalf("install binary only = %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(other, PluginType)); err != nil {
		t.Errorf("the flag did not win over APIARY_CNI_BIN_DIR: %v", err)
	}
	if entries, _ := os.ReadDir(conf); len(entries) != 1 {
		t.Errorf("an empty APIARY_CNI_CONF_DIR wrote a conflist: %v", entries)
	}
}
