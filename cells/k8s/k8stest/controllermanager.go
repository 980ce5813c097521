package k8stest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiary-net/apiary/cells/celltest"
)

// NodeIPAM configures the node IPAM controller of
// StartControllerManager: the controller gives every Node a pod CIDR of
// each cluster CIDR (spec.podCIDRs), as kube-controller-manager
// --allocate-node-cidrs does in most clusters.
type NodeIPAM struct {
	// ClusterCIDRs are the clusters' pod CIDRs, at most one IPv4 and one
	// IPv6 ("10.244.0.0/16").
	ClusterCIDRs []string
	// MaskSizeIPv4 and MaskSizeIPv6 are the size of each node's CIDR
	// (kube-controller-manager's defaults, 24 and 64, when 0).
	MaskSizeIPv4, MaskSizeIPv6 int
	// Controllers are more controllers to run beside nodeipam
	// ("endpointslice": the Services' EndpointSlices from their pods).
	Controllers []string
}

// ControllerManager is a running kube-controller-manager.
type ControllerManager struct {
	cmd    *exec.Cmd
	exited chan struct{}
	log    string
}

// StartControllerManager starts kube-controller-manager v1.35 against s
// with only the node IPAM controller (--controllers=nodeipam
// --allocate-node-cidrs). It authenticates as the administrator through
// a kubeconfig and uses that client for its controllers
// (--use-service-account-credentials=false: no token controller is
// needed), serves nothing (--secure-port=0) and elects no leader. It
// stops when the test ends; the test is skipped when the binary is
// missing and cannot be built, like Start.
func (s *Server) StartControllerManager(t testing.TB, ipam NodeIPAM) *ControllerManager {
	t.Helper()
	bin, err := ControllerManagerBinary()
	if err != nil {
		celltest.SkipUnprivileged(t, "k8stest: no kube-controller-manager (run `make kube-controller-manager`): %v", err)
	}
	if len(ipam.ClusterCIDRs) == 0 {
		t.Fatal("k8stest: NodeIPAM needs ClusterCIDRs")
	}
	args := []string{
		"--kubeconfig=" + s.WriteKubeconfig(AdminToken),
		"--controllers=" + strings.Join(append([]string{"nodeipam"}, ipam.Controllers...), ","),
		"--allocate-node-cidrs=true",
		"--cluster-cidr=" + strings.Join(ipam.ClusterCIDRs, ","),
		"--service-cluster-ip-range=10.96.0.0/16", // the API server's
		"--use-service-account-credentials=false",
		"--leader-elect=false",
		"--secure-port=0",
		"--v=2",
	}
	if ipam.MaskSizeIPv4 != 0 {
		args = append(args, fmt.Sprintf("--node-cidr-mask-size-ipv4=%d", ipam.MaskSizeIPv4))
	}
	if ipam.MaskSizeIPv6 != 0 {
		args = append(args, fmt.Sprintf("--node-cidr-mask-size-ipv6=%d", ipam.MaskSizeIPv6))
	}
	cm := &ControllerManager{log: s.path(fmt.Sprintf("kube-controller-manager-%d.log", time.Now().UnixNano()))}
	logFile, err := os.OpenFile(cm.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatalf("k8stest: open the controller manager's log: %v", err)
	}
	defer logFile.Close()
	cm.cmd = exec.Command(bin, args...)
	cm.cmd.Stdout, cm.cmd.Stderr = logFile, logFile
	if cm.exited, err = forkLocked(cm.cmd); err != nil {
		t.Fatalf("k8stest: start kube-controller-manager: %v", err)
	}
	t.Cleanup(cm.Stop)
	return cm
}

// Exited is closed when the process has exited.
func (cm *ControllerManager) Exited() <-chan struct{} { return cm.exited }

// LogTail returns the last n lines of the controller manager's log.
func (cm *ControllerManager) LogTail(n int) string {
	data, _ := os.ReadFile(cm.log)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Stop stops the process (SIGTERM, SIGKILL after 10s); it may be called
// again.
func (cm *ControllerManager) Stop() {
	select {
	case <-cm.exited:
		return
	default:
	}
	_ = cm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-cm.exited:
	case <-time.After(10 * time.Second):
		_ = cm.cmd.Process.Kill()
		<-cm.exited
	}
}
