package k8scluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/api/client"
	"github.com/apiary-net/apiary/cells/celltest"
	"github.com/apiary-net/apiary/datapath/linux/netnstest"
)

// binaries are the programs a node runs, built once per test binary.
type binaries struct {
	agent, cni, cli string
}

var (
	buildOnce sync.Once
	built     binaries
	buildErr  error
	builtDir  string
)

// removeBinaries removes the binaries the clusters of this test binary
// ran (82 MB a build).
func removeBinaries() {
	if builtDir != "" {
		_ = os.RemoveAll(builtDir)
	}
}

// buildBinaries builds apiary-agent, apiary-cni and apiary into a
// directory that lasts until TestMain calls removeBinaries.
func buildBinaries(t testing.TB) binaries {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "k8scluster-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtDir = dir
		root := filepath.Join(installDir(), "..", "..")
		cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/apiary-agent", "./cmd/apiary-cni", "./cmd/apiary")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		built = binaries{agent: filepath.Join(dir, "apiary-agent"), cni: filepath.Join(dir, "apiary-cni"), cli: filepath.Join(dir, "apiary")}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return built
}

// Node is one node: a network namespace on the underlay running an
// agent.
type Node struct {
	c    *Cluster
	Name string
	// NS is the node's network namespace (its "host" namespace).
	NS string
	IP netip.Addr
	// Dir holds the agent's socket, state, logs and CNI configuration.
	Dir    string
	Client *client.Client

	index int
	mu    sync.Mutex
	agent *exec.Cmd
	done  chan struct{}
}

// Socket is the agent's API socket.
func (n *Node) Socket() string { return filepath.Join(n.Dir, "apiary.sock") }

// HubbleSocket is the agent's Hubble API socket.
func (n *Node) HubbleSocket() string { return filepath.Join(n.Dir, "hubble.sock") }

// Observe runs `apiary observe` against the node's Hubble API with args
// and returns its output.
func (n *Node) Observe(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(n.c.bins.cli, append([]string{"observe", "--server", "unix://" + n.HubbleSocket()}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("apiary observe %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// CNIConf is the conflist the agent writes when ready.
func (n *Node) CNIConf() string { return filepath.Join(n.Dir, "net.d", "05-apiary.conflist") }

// BPFRoot is the node's bpffs directory.
func (n *Node) BPFRoot() string {
	return filepath.Join("/sys/fs/bpf", "k8sc-"+filepath.Base(n.c.dir)+"-"+n.Name)
}

// addNode creates node i's namespace on the underlay and registers the
// node with the API server, as kubelet does at its first start.
func (c *Cluster) addNode(i int) *Node {
	n := &Node{c: c, Name: fmt.Sprintf("node-%d", i+1), NS: netnstest.New(c.t, "k8sc-node"),
		IP: netip.AddrFrom4([4]byte{10, 99, 0, byte(11 + i)}), index: i}
	n.Dir = filepath.Join(c.dir, n.Name)
	for _, d := range []string{n.Dir, filepath.Join(n.Dir, "net.d")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			c.t.Fatal(err)
		}
	}
	c.plugNode(n, i)
	c.registerNode(n)
	n.Client = client.New(n.Socket())
	c.t.Cleanup(func() {
		n.StopAgent()
		_ = os.RemoveAll(n.BPFRoot())
	})
	return n
}

// agentArgs are the flags of node n's agent: the ConfigMap's, with the
// paths that the nodes of this machine must not share moved under the
// node's directory, and the API server through the agents' kubeconfig.
func (n *Node) agentArgs() []string {
	args := []string{
		"--config-dir=" + n.c.configDir,
		"--k8s-kubeconfig-path=" + n.c.kubeconfig,
		"--socket-path=" + n.Socket(),
		"--state-dir=" + filepath.Join(n.Dir, "state"),
		"--bpf-root=" + n.BPFRoot(),
		"--write-cni-conf-when-ready=" + n.CNIConf(),
		"--log-format=text",
		// Hubble on, as a user who opens `hubble observe` has it.
		"--enable-hubble", "--hubble-socket-path=" + n.HubbleSocket(),
	}
	args = append(args, n.c.opts.AgentArgs...)
	if n.c.opts.NodeArgs != nil {
		args = append(args, n.c.opts.NodeArgs(n.index)...)
	}
	return args
}

// StartAgent starts the node's agent in its namespace, with the
// environment the DaemonSet gives it (node name and host IP from the
// downward API).
func (n *Node) StartAgent() {
	n.c.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	log, err := os.OpenFile(filepath.Join(n.Dir, "agent.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		n.c.t.Fatal(err)
	}
	defer log.Close()
	// The agent writes the CNI configuration when it is ready again
	// (WaitHealthy waits for it).
	if err := os.Remove(n.CNIConf()); err != nil && !os.IsNotExist(err) {
		n.c.t.Fatal(err)
	}
	cmd := exec.Command(n.c.bins.agent, n.agentArgs()...)
	cmd.Env = append(os.Environ(), "APIARY_NODE_NAME="+n.Name, "APIARY_NODE_IP="+n.IP.String())
	cmd.Stdout, cmd.Stderr = log, log
	// No Pdeathsig: it fires when the forking thread ends, and that
	// thread is dropped right after the fork.
	// The child is forked from a thread in the node's namespace.
	if err := inNS(n.NS, cmd.Start); err != nil {
		n.c.t.Fatalf("start the agent of %s: %v", n.Name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	n.agent, n.done = cmd, done
}

// StopAgent stops the agent (SIGTERM, then SIGKILL after 30 s).
func (n *Node) StopAgent() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.agent == nil {
		return
	}
	_ = n.agent.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(30 * time.Second):
		_ = n.agent.Process.Kill()
		<-n.done
	}
	n.agent = nil
}

// KillAgent kills the agent at once (kill -9).
func (n *Node) KillAgent() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.agent == nil {
		return
	}
	_ = n.agent.Process.Kill()
	<-n.done
	n.agent = nil
}

// WaitHealthy waits until the agent answers /healthz and has written
// its CNI configuration (it is ready for pods).
func (n *Node) WaitHealthy() {
	n.c.t.Helper()
	celltest.EventuallyWithin(n.c.t, "the agent of "+n.Name+" ready", 2*time.Minute, func() bool {
		n.mu.Lock()
		done := n.done
		n.mu.Unlock()
		select {
		case <-done:
			n.c.t.Fatalf("the agent of %s exited:\n%s", n.Name, n.LogTail(40))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := n.Client.Healthz(ctx); err != nil {
			return false
		}
		_, err := os.Stat(n.CNIConf())
		return err == nil
	})
}

// LogTail returns the last lines of the agent's log.
func (n *Node) LogTail(lines int) string {
	data, _ := os.ReadFile(filepath.Join(n.Dir, "agent.log"))
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}
