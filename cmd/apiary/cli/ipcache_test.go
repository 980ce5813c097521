package cli_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/celltest"

	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

func TestIPCacheCommandsStandalone(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "apiary.sock")
	celltest.StartWithFlags(t, []string{
		"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"), "bpf-root=" + bpfmaptest.Root(t), "node-name=node-a", "node-ip=192.0.2.10",
	}, agent.Agent)
	code, out, errOut := run(t, socket, "ipcache", "get", "192.0.2.10")
	if code != 0 || errOut != "" || !containsLine(out, "192.0.2.10/32   1 (host)   local                  0") {
		t.Errorf("ipcache get = %d %q %q", code, out, errOut)
	}
	code, _, errOut = run(t, socket, "ipcache", "get", "198.51.100.1")
	if want := "GET /v1/ipcache/198.51.100.1: 404 Not Found: no ipcache entry holds 198.51.100.1\n"; code != 1 || errOut != want {
		t.Errorf("IP in no entry = %d %q, want 1 and %q", code, errOut, want)
	}
	code, _, errOut = run(t, socket, "ipcache", "get", "not-an-ip")
	if want := "GET /v1/ipcache/not-an-ip: 400 Bad Request: ip: \"not-an-ip\" is not an IP address\n"; code != 1 || errOut != want {
		t.Errorf("bad IP = %d %q, want 1 and %q", code, errOut, want)
	}
	code, _, errOut = run(t, socket, "ipcache", "list", "-o", "yaml")
	if code != 1 || errOut != "--output: \"yaml\" is not text or json\n" {
		t.Errorf("bad --output = %d %q", code, errOut)
	}
}

func containsLine(out, line string) bool {
	for l := range strings.Lines(out) {
		if strings.TrimSuffix(l, "\n") == line {
			return true
		}
	}
	return false
}
