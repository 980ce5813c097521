package localnode

import (
	"fmt"
	"log/slog"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/localnode/cluster"
)

// Cell provides the Store of the local node and the cluster's
// types.ClusterInfo, from their flags. A host without a usable name or
// address (when the flags do not give them) stops the agent at once,
// naming the flag to set.
var Cell = cell.Module("local-node", "This node: name, address, pod CIDRs and cluster",
	cell.Config(cluster.DefaultInfo),
	cell.Config(DefaultConfig),
	cell.Provide(newStoreFromConfig),
)

type storeParams struct {
	cell.In

	Config  Config
	Cluster cluster.Info
	Log     *slog.Logger
	Source  NodeSource `optional:"true"`
}

// newStoreFromConfig builds the local node from the flags, reading the
// host name and the interface addresses when they are not given. With
// --ipam=kubernetes and a NodeSource, the Node object gives the node IP
// (without --node-ip) and the pod CIDRs it has already; the agent waits
// for it, as Cilium's does.
func newStoreFromConfig(p storeParams) (Store, error) {
	cfg, log := p.Config, p.Log
	name, err := nodeName(cfg.NodeName, log)
	if err != nil {
		return nil, &cell.ConfigError{Err: fmt.Errorf("--node-name: %w", err)}
	}
	n := LocalNode{Name: name, Cluster: p.Cluster}
	n.IPv4AllocCIDR, n.IPv6AllocCIDR, _ = parsePodCIDRs(cfg.PodCIDR) // checked by Config.Validate
	if cfg.IPAM == IPAMKubernetes && p.Source != nil {
		if err := fromKubernetes(&n, cfg, p.Source, log); err != nil {
			return nil, err
		}
	}
	if !n.IP.IsValid() {
		if n.IP, n.SecondaryIP, err = nodeIPs(cfg.NodeIP, log); err != nil {
			return nil, &cell.ConfigError{Err: fmt.Errorf("--node-ip: %w", err)}
		}
	}
	return NewStore(n), nil
}
