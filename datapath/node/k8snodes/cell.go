package k8snodes

import (
	"context"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cells/k8s"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
	"github.com/apiary-net/apiary/datapath/node"
	"github.com/apiary-net/apiary/policy/source"
)

// Cell watches the Kubernetes nodes into the node manager. It needs the
// Kubernetes client cell and the node manager; without Kubernetes it
// does nothing.
var Cell = cell.Module("node-k8s", "Kubernetes nodes into the node manager",
	cell.Invoke(startWatcher),
)

type watcherParams struct {
	cell.In

	Clientset k8s.Clientset
	Nodes     k8s.Nodes
	Manager   node.Manager
	Cluster   cluster.Info
	Jobs      job.Group
	Log       *slog.Logger
}

func startWatcher(p watcherParams) {
	if !p.Clientset.IsEnabled() {
		return
	}
	p.Jobs.Add(job.OneShot("k8s-watch-nodes", func(ctx context.Context, health cell.Health) error {
		for ev := range p.Nodes.Events(ctx) {
			switch ev.Kind {
			case k8s.Sync:
				health.OK("synced")
			case k8s.Upsert:
				p.Manager.NodeUpdated(Convert(ev.Object, p.Cluster))
			case k8s.Delete:
				p.Manager.NodeDeleted(node.Node{Name: ev.Key.Name, Cluster: p.Cluster.ClusterName, Source: source.Kubernetes})
			}
		}
		return nil
	}))
}
