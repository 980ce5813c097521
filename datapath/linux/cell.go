package linux

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/tunnel"
)

// Cell provides datapath.EndpointLinks and datapath.NodeRoutes working
// in the agent's network namespace or --datapath-netns.
var Cell = cell.Module("datapath-linux", "Linux plumbing: endpoint veths, node routes, tunnel device, sysctls",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newDatapath),
	cell.Provide(
		func(d *Datapath) datapath.EndpointLinks { return d },
		func(d *Datapath) datapath.NodeRoutes { return d },
		func(d *Datapath) datapath.TunnelDevice { return d },
		newStatusProvider,
	),
)

// Config configures the Linux datapath.
type Config struct {
	// DatapathNetNS is the path of the network namespace the node's
	// datapath lives in; empty: the agent's own.
	DatapathNetNS string
}

// DefaultConfig works in the agent's namespace.
var DefaultConfig = Config{}

// Flags registers --datapath-netns.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("datapath-netns", def.DatapathNetNS,
		"Network namespace (path) holding the node's endpoint veths and routes (default: the agent's own)")
}

// Validate checks the path is absolute.
func (c *Config) Validate() error {
	if c.DatapathNetNS != "" && !filepath.IsAbs(c.DatapathNetNS) {
		return fmt.Errorf("--datapath-netns: %q is not an absolute path", c.DatapathNetNS)
	}
	return nil
}

type datapathParams struct {
	cell.In

	Config    Config
	Routing   tunnel.Config `optional:"true"`
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

// newDatapath returns the datapath; it opens the namespace when the
// hive starts and, in tunnel routing, creates the tunnel device (in
// native routing it removes one left by an earlier run).
func newDatapath(p datapathParams) *Datapath {
	d := &Datapath{log: p.Log, host: -1}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			if err := d.open(p.Config.DatapathNetNS); err != nil {
				return fmt.Errorf("--datapath-netns: %w", err)
			}
			return d.startRouting(p.Routing)
		},
		OnStop: func(cell.HookContext) error { return d.Close() },
	})
	return d
}

// startRouting sets up the tunnel device of --routing-mode=tunnel, or
// removes a leftover one in native mode.
func (d *Datapath) startRouting(c tunnel.Config) error {
	if !c.Enabled() {
		return d.RemoveTunnelDevice()
	}
	if _, err := d.EnsureTunnelDevice(c.Port()); err != nil {
		return fmt.Errorf("--routing-mode=tunnel: %w", err)
	}
	return nil
}
