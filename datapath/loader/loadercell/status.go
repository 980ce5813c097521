package loadercell

import (
	"context"
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/status"
)

// newStatusProvider adds Cilium's "KubeProxyReplacement" line to `apiary
// status`: which parts of kube-proxy's job the datapath does and how many
// frontends and backends its maps hold, e.g. "True [ClusterIP per packet,
// socket LB on /sys/fs/cgroup, NodePort on eth0] (12 frontends, 30
// backends)".
func newStatusProvider(id cell.FullModuleID, d *Datapath, c Config, devs *devices, addrs *nodePortAddrs) status.ProviderOut {
	return status.NewProviderOut(id, "KubeProxyReplacement", func(context.Context) status.Report {
		return kprReport(d, c, devs, addrs)
	})
}

func kprReport(d *Datapath, c Config, devs *devices, addrs *nodePortAddrs) status.Report {
	c = c.effective()
	parts := []string{"ClusterIP per packet"}
	state := status.Ok
	if c.BPFLBSock {
		var notes []string
		if subgroup(c.CgroupRoot) {
			notes = append(notes, "a sub-group: its processes only")
		}
		if c.BPFLBSockHostnsOnly {
			notes = append(notes, "host namespace only")
		}
		sock := "socket LB on " + c.CgroupRoot
		if len(notes) > 0 {
			sock += " (" + strings.Join(notes, "; ") + ")"
		}
		parts = append(parts, sock)
		if c.NodePortBindProtection {
			parts = append(parts, "NodePort bind protection")
		}
	}
	if c.EnableNodePort {
		on, any := devs.status()
		if any {
			on += " (" + addrs.devicesStatus() + ")"
		} else { // NodePorts unreachable from outside, though asked for
			state = status.Warning
		}
		if err := d.nodePortFailure(); err != nil {
			on += " (programs not attached to all: " + err.Error() + ")"
			state = status.Warning
		}
		parts = append(parts, "NodePort on "+on)
		if c.BPFLBExternalClusterIP {
			parts = append(parts, "ClusterIP from outside")
		}
	}
	msg := "True [" + strings.Join(parts, ", ") + "]"
	d.mu.Lock()
	w := d.lb
	d.mu.Unlock()
	if w == nil {
		return status.Report{State: state, Message: msg + " (maps not open)"}
	}
	fe, be := w.Stats()
	counts := fmt.Sprintf("%d frontends, %d backends", fe, be)
	if d.term != nil {
		if n := d.term.destroyed.Load(); n > 0 {
			counts += fmt.Sprintf(", %d sockets of deleted backends terminated", n)
		}
	}
	return status.Report{State: state, Message: fmt.Sprintf("%s (%s)", msg, counts)}
}
