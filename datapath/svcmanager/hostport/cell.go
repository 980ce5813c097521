package hostport

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode"
	"github.com/apiary-net/apiary/datapath/svcmanager"
)

// Cell follows this node's pods and keeps the service manager's
// SourceHostPort their host ports (--enable-host-port, Cilium's flag,
// default true). Without Kubernetes it does nothing. The manager's
// initial reconcile waits for its first listing, so that an agent
// restart keeps the host ports it had.
var Cell = cell.Module("service-hostports", "Pods' hostPorts as HostPort frontends",
	cell.Config(DefaultConfig),
	cell.Invoke(start),
)

// Config is the cell's configuration.
type Config struct {
	// EnableHostPort balances the pods' hostPorts.
	EnableHostPort bool
}

// DefaultConfig balances them.
var DefaultConfig = Config{EnableHostPort: true}

// Flags registers --enable-host-port.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Bool("enable-host-port", def.EnableHostPort,
		"Balance the hostPorts of this node's pods in the datapath (HostPort frontends at the port's hostIP or every node address), in place of the CNI portmap plugin")
}

type params struct {
	cell.In

	Config    Config
	Clientset k8s.Clientset
	Pods      k8s.Pods
	Gate      k8s.CacheSync
	Manager   *svcmanager.Manager
	Node      localnode.Store
	Jobs      job.Group
}

func start(p params) {
	if !p.Config.EnableHostPort || !p.Clientset.IsEnabled() {
		return
	}
	synced := p.Gate.Register(p.Pods.Name() + " (host ports)")
	p.Jobs.Add(job.OneShot("k8s-watch-pod-hostports", func(ctx context.Context, health cell.Health) error {
		node := p.Node.Get().Name
		held := map[k8s.Key]bool{} // pods with a service in the manager
		for ev := range p.Pods.Events(ctx) {
			switch ev.Kind {
			case k8s.Sync:
				synced()
				health.OK(fmt.Sprintf("synced, %d pods with host ports", len(held)))
			case k8s.Upsert:
				if svc := FromPod(ev.Object, node); svc != nil {
					p.Manager.Upsert(svcmanager.SourceHostPort, svc)
					held[ev.Key] = true
					continue
				}
				fallthrough
			case k8s.Delete:
				if held[ev.Key] {
					p.Manager.Delete(svcmanager.SourceHostPort, ev.Key.Namespace+"/"+ev.Key.Name)
					delete(held, ev.Key)
				}
			}
		}
		return nil
	}))
}
