package linux

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
)

// Cell provides datapath.EndpointLinks and datapath.NodeRoutes working
// in the agent's network namespace or --datapath-netns.
var Cell = cell.Module("datapath-linux", "Linux plumbing: endpoint veths, node routes, sysctls",
	cell.Config(DefaultConfig),
	cell.ProvidePrivate(newDatapath),
	cell.Provide(
		func(d *Datapath) datapath.EndpointLinks { return d },
		func(d *Datapath) datapath.NodeRoutes { return d },
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

// newDatapath returns the datapath; it opens the namespace when the
// hive starts.
func newDatapath(c Config, lc cell.Lifecycle, log *slog.Logger) *Datapath {
	d := &Datapath{log: log, host: -1}
	lc.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			if err := d.open(c.DatapathNetNS); err != nil {
				return fmt.Errorf("--datapath-netns: %w", err)
			}
			return nil
		},
		OnStop: func(cell.HookContext) error { return d.Close() },
	})
	return d
}
