package loadercell

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	"github.com/apiary-net/apiary/datapath/maps/policymap"
	"github.com/apiary-net/apiary/policy/policycell"
)

// Cell provides the *loader.Loader, open between start and stop, and
// the control plane's datapath.Loader, datapath.PolicyMapWriter and
// datapath.IPCacheMapWriter backed by it (Datapath).
var Cell = cell.Module("bpf-loader", "BPF loader: endpoint programs, pinned maps and tcx links",
	cell.Config(DefaultConfig),
	cell.Provide(
		newLoader,
		newDatapath,
		func(d *Datapath) datapath.Loader { return d },
		func(d *Datapath) datapath.PolicyMapWriter { return d },
		func(d *Datapath) datapath.IPCacheMapWriter { return d },
	),
)

// Config is the loader's configuration.
type Config struct {
	// BPFRoot is the bpffs directory maps and links are pinned under.
	BPFRoot string
	// BPFAttachMode is auto (tcx, else tc clsact), tcx or tc.
	BPFAttachMode string
}

var attachModes = map[string]loader.AttachMode{"auto": loader.AttachAuto, "tcx": loader.AttachTCX, "tc": loader.AttachTC}

// DefaultConfig has the defaults of the flags.
var DefaultConfig = Config{BPFRoot: bpfmap.DefaultRoot, BPFAttachMode: "auto"}

// Flags registers --bpf-root and --bpf-attach-mode. The size of the
// policy maps is the policy cell's --bpf-policy-map-max (trace reports
// against the same number).
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("bpf-root", def.BPFRoot, "Directory on a bpffs to pin BPF maps and links under (a bpffs is mounted there if it is not on one)")
	fs.String("bpf-attach-mode", def.BPFAttachMode, "How endpoint programs attach: auto (tcx on Linux >= 6.6, else tc clsact), tcx or tc")
}

// Validate checks the flags.
func (c *Config) Validate() error {
	if c.BPFRoot == "" {
		return fmt.Errorf("--bpf-root must not be empty")
	}
	if _, ok := attachModes[c.BPFAttachMode]; !ok {
		return fmt.Errorf("--bpf-attach-mode %q is not one of auto, tcx, tc", c.BPFAttachMode)
	}
	return nil
}

type loaderParams struct {
	cell.In

	Config Config
	// Policy gives --bpf-policy-map-max; without the policy cell the
	// maps have policymap.DefaultMaxEntries entries.
	Policy    policycell.Config `optional:"true"`
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

func newLoader(p loaderParams) (*loader.Loader, error) {
	size := uint32(policymap.DefaultMaxEntries)
	if p.Policy.BPFPolicyMapMax > 0 {
		size = uint32(p.Policy.BPFPolicyMapMax)
	}
	l, err := loader.New(p.Log, p.Config.BPFRoot, size, loader.WithAttachMode(attachModes[p.Config.BPFAttachMode]))
	if err != nil {
		return nil, &cell.ConfigError{Err: err}
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error { return l.Open() },
		OnStop:  func(cell.HookContext) error { return l.Close() },
	})
	return l, nil
}
