package agent_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/cells/status"
	"github.com/apiary-net/apiary/cmd/apiary-agent/agent"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap/bpfmaptest"
)

// tempFlags keeps the agent out of /var/run and /sys/fs/bpf/apiary (a
// private bpffs).
func tempFlags(t testing.TB) (socket string, flags []string) {
	t.Helper()
	dir := t.TempDir()
	socket = filepath.Join(dir, "apiary.sock")
	return socket, []string{"socket-path=" + socket, "state-dir=" + filepath.Join(dir, "state"),
		"bpf-root=" + bpfmaptest.Root(t)}
}

func TestPopulate(t *testing.T) {
	_, flags := tempFlags(t)
	// celltest.New fails the test if any provider is missing.
	h := celltest.New(t, flags, agent.Agent)
	var out strings.Builder
	if err := h.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, module := range []string{"agent-info", "statedir", "api-server", "metrics", "status",
		"kvstore", "identity", "ipcache", "node-manager", "clustermesh"} {
		if !strings.Contains(out.String(), "module "+module+":") {
			t.Errorf("hive has no module %s", module)
		}
	}
}

func TestStatusLines(t *testing.T) {
	socket, flags := tempFlags(t)
	celltest.StartWithFlags(t, append(flags, "prometheus-serve-addr=127.0.0.1:0"), agent.Agent)
	st, err := client.New(socket).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range st.Entries {
		names = append(names, e.Name)
		disabled := e.Name == "ClusterMesh" || strings.HasPrefix(e.Name, "Kubernetes") // not configured
		if e.State != status.Ok && e.Name != "KVStore" && (!disabled || e.State != status.Disabled) {
			t.Errorf("%s: %s %s, want Ok", e.Name, e.State, e.Message)
		}
	}
	if got, want := strings.Join(names, ","), "Agent,State dir,Metrics,API,Controllers,Hive,Kubernetes,Kubernetes APIs,KVStore,Identities,Policy,IPCache,Nodes,KubeProxyReplacement,IPCache map,Endpoints,ClusterMesh"; got != want {
		t.Errorf("status lines = %s, want %s", got, want)
	}
	agentLine := regexp.MustCompile(`^dev \(go[^)]+\), up [0-9hms.]+$`)
	if !agentLine.MatchString(st.Entries[0].Message) {
		t.Errorf("Agent line = %q, want version and uptime", st.Entries[0].Message)
	}
	if st.State != status.Ok {
		t.Errorf("overall = %s, want Ok", st.State)
	}
}
