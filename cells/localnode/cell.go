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

// newStoreFromConfig builds the local node from the flags, reading the
// host name and the interface addresses when they are not given.
func newStoreFromConfig(cfg Config, cluster cluster.Info, log *slog.Logger) (Store, error) {
	name, err := nodeName(cfg.NodeName, log)
	if err != nil {
		return nil, &cell.ConfigError{Err: fmt.Errorf("--node-name: %w", err)}
	}
	ip, ip2, err := nodeIPs(cfg.NodeIP, log)
	if err != nil {
		return nil, &cell.ConfigError{Err: fmt.Errorf("--node-ip: %w", err)}
	}
	v4, v6, _ := parsePodCIDRs(cfg.PodCIDR) // checked by Config.Validate
	return NewStore(LocalNode{
		Name: name, Cluster: cluster, IP: ip, SecondaryIP: ip2,
		IPv4AllocCIDR: v4, IPv6AllocCIDR: v6,
	}), nil
}
