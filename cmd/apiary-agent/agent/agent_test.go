package agent_test

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/api/models"
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
	celltest.StartWithFlags(t, append(flags, "prometheus-serve-addr=127.0.0.1:0", "pod-cidr=10.0.1.0/24"), agent.Agent)
	st, err := client.New(socket).Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range st.Entries {
		names = append(names, e.Name)
		disabled := e.Name == "ClusterMesh" || e.Name == "Hubble" || strings.HasPrefix(e.Name, "Kubernetes") // not configured
		if e.State != status.Ok && e.Name != "KVStore" && (!disabled || e.State != status.Disabled) {
			t.Errorf("%s: %s %s, want Ok", e.Name, e.State, e.Message)
		}
	}
	if got, want := strings.Join(names, ","), "Agent,State dir,Metrics,API,Controllers,Hive,Kubernetes,Kubernetes APIs,KVStore,Identities,Policy,IPCache,Nodes,Routing,KubeProxyReplacement,IPCache map,Endpoints,IPAM,Services,Hubble,ClusterMesh"; got != want {
		t.Errorf("status lines = %s, want %s", got, want)
	}
	if i := slices.IndexFunc(st.Entries, func(e models.StatusEntry) bool { return e.Name == "IPAM" }); i < 0 ||
		st.Entries[i].Message != "static: 10.0.1.0/24, 0 addresses allocated" {
		t.Errorf("IPAM line = %+v, want the --pod-cidr and no address allocated", st.Entries)
	}
	agentLine := regexp.MustCompile(`^dev \(go[^)]+\), up [0-9hms.]+$`)
	if !agentLine.MatchString(st.Entries[0].Message) {
		t.Errorf("Agent line = %q, want version and uptime", st.Entries[0].Message)
	}
	if st.State != status.Ok {
		t.Errorf("overall = %s, want Ok", st.State)
	}
}
