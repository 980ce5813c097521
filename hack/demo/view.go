package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// view prints what a user would look at on the first node of the
// scenario's cluster: the ClusterMesh line of `apiary status`, `apiary
// node list` (the other clusters' nodes included) and `apiary endpoint
// list`, each with the command that prints it.
func (l *lab) view(ctx context.Context) {
	n := l.p.cluster("").nodes[0]
	l.waitStatusLine(ctx, n)
	for _, cmd := range []struct {
		args   []string
		filter string
	}{
		{[]string{"status"}, "ClusterMesh"},
		{[]string{"node", "list"}, ""},
		{[]string{"endpoint", "list"}, ""},
	} {
		fmt.Fprintf(l.out, "$ apiary --socket %s %s", dir(n.name, "apiary.sock"), strings.Join(cmd.args, " "))
		if cmd.filter != "" {
			fmt.Fprintf(l.out, " | grep %s", cmd.filter)
		}
		fmt.Fprintln(l.out)
		out, err := l.cli(n, cmd.args...)
		if err != nil {
			fmt.Fprintf(l.out, "(%v)\n", err)
		}
		for _, line := range strings.SplitAfter(string(out), "\n") {
			if cmd.filter == "" || strings.Contains(line, cmd.filter) {
				fmt.Fprint(l.out, line)
			}
		}
	}
	fmt.Fprintln(l.out)
}

// waitStatusLine waits (up to 10s) for the ClusterMesh line of node n's
// status to count every remote cluster: the agent probes its status
// lines every 5s, and a first probe made before the mesh directory was
// read says "Ok 0/0 clusters ready" until the next one.
func (l *lab) waitStatusLine(ctx context.Context, n *node) {
	remotes := len(l.p.clusters) - 1
	if remotes == 0 {
		return
	}
	want := fmt.Sprintf("%d/%d clusters ready", remotes, remotes)
	err := poll(ctx, 10*time.Second, "the ClusterMesh status line of "+n.name, func() (bool, error) {
		st, err := l.client[n].Status(ctx)
		if err != nil {
			return false, nil
		}
		for _, e := range st.Entries {
			if e.Name == "ClusterMesh" && strings.HasPrefix(e.Message, want) {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		fmt.Fprintf(l.out, "(%v)\n", err)
	}
}

// cli runs the apiary CLI against node n's agent.
func (l *lab) cli(n *node, args ...string) ([]byte, error) {
	var out bytes.Buffer
	cmd := exec.Command(l.bins.cli, append([]string{"--socket", dir(n.name, "apiary.sock")}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// printKeep says how to use the lab left up.
func (l *lab) printKeep() {
	fmt.Fprintln(l.out, "\nThe lab stays up (KEEP=1). Remove it with `make demo-down`.")
	fmt.Fprintln(l.out, "The CLI of each agent:")
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			fmt.Fprintf(l.out, "  %s --socket %s status   # %s\n", l.bins.cli, dir(n.name, "apiary.sock"), n.name)
		}
	}
	fmt.Fprintln(l.out, "A shell in a pod's network namespace (then e.g. `exec 3<>/dev/tcp/<ip>/<port>; echo PING >&3; head -1 <&3`):")
	for _, po := range l.p.pods {
		fmt.Fprintf(l.out, "  ip netns exec %s bash   # %s %s %s on %s\n", podNS(po), po.ref, po.ips[v4], po.ips[v6], po.node.name)
	}
	for _, po := range l.gsvcPods {
		fmt.Fprintf(l.out, "  ip netns exec %s bash   # %s\n", po.ns(), po)
	}
	fmt.Fprintf(l.out, "Logs: %s/<node>/agent.log, %s/etcd-<cluster>/etcd.log\n", labDir, labDir)
}
