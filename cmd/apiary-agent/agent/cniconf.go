package agent

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/api"
	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/cells/job"
	"github.com/apiary-net/apiary/cmd/apiary-cni/plugin"
	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/datapath/endpoint/ipam"
)

// CNIConf writes the CNI network configuration of apiary-cni once the
// agent is ready (--write-cni-conf-when-ready, Cilium's flag): kubelet
// reports a node ready for pods only when a CNI configuration exists, so
// pods are not scheduled before the agent can give them addresses and
// enforce their policy.
var CNIConf = cell.Module("cni-conf", "Writes the CNI configuration once the agent is ready",
	cell.Config(DefaultCNIConfConfig),
	cell.Invoke(startCNIConfWriter),
)

// CNIConfConfig is the configuration of the cni-conf cell.
type CNIConfConfig struct {
	// WriteCNIConfWhenReady is the path of the conflist to write (empty:
	// none).
	WriteCNIConfWhenReady string
}

// DefaultCNIConfConfig writes no conflist.
var DefaultCNIConfConfig = CNIConfConfig{}

// Flags registers --write-cni-conf-when-ready.
func (def CNIConfConfig) Flags(fs *pflag.FlagSet) {
	fs.String("write-cni-conf-when-ready", def.WriteCNIConfWhenReady,
		"Write the CNI conflist of apiary-cni to this path (e.g. /host/etc/cni/net.d/05-apiary.conflist) once the agent is ready: endpoints restored with their identities and policy")
}

// Validate checks the path.
func (c *CNIConfConfig) Validate() error {
	if c.WriteCNIConfWhenReady != "" && !filepath.IsAbs(c.WriteCNIConfWhenReady) {
		return fmt.Errorf("--write-cni-conf-when-ready: %q is not an absolute path", c.WriteCNIConfWhenReady)
	}
	return nil
}

type cniConfParams struct {
	cell.In

	Config    CNIConfConfig
	API       api.Config
	Endpoints *endpoint.Manager
	IPAM      *ipam.IPAM
	Jobs      job.Group
	Log       *slog.Logger
}

// startCNIConfWriter adds the job writing the conflist after the
// endpoints' restore (addresses, identities, policy) is done and the
// node has its pod CIDRs (--ipam=kubernetes: once the Node has
// spec.podCIDRs; kubelet schedules no pod on the node before).
func startCNIConfWriter(p cniConfParams) {
	path := p.Config.WriteCNIConfWhenReady
	if path == "" {
		return
	}
	p.Jobs.Add(job.OneShot("write-cni-conf", func(ctx context.Context, _ cell.Health) error {
		if err := p.Endpoints.WaitForRestore(ctx); err != nil {
			return err
		}
		select {
		case <-p.IPAM.Ready():
		default:
			p.Log.Info("Waiting for the node's pod CIDRs before writing the CNI configuration", "ipam", p.IPAM.Waiting())
			select {
			case <-p.IPAM.Ready():
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := plugin.WriteConflist(path, p.API.SocketPath, ""); err != nil {
			return err
		}
		p.Log.Info("Wrote the CNI configuration", "path", path, "socket-path", p.API.SocketPath)
		return nil
	}, job.WithRetry(-1, job.Backoff{Min: time.Second, Max: time.Minute})))
}
