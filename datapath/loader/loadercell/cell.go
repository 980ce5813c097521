package loadercell

import (
	"fmt"
	"log/slog"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
	"github.com/apiary-net/apiary/datapath/loader"
	"github.com/apiary-net/apiary/datapath/maps/bpfmap"
	policymap "github.com/apiary-net/apiary/datapath/maps/policy"
)

// Cell provides the *loader.Loader, open between start and stop.
var Cell = cell.Module("bpf-loader", "BPF loader: endpoint programs, pinned maps and tcx links",
	cell.Config(DefaultConfig),
	cell.Provide(newLoader),
)

// Config is the loader's configuration.
type Config struct {
	// BPFRoot is the bpffs directory maps and links are pinned under.
	BPFRoot string
	// BPFPolicyMapMax is the number of entries of each endpoint's policy
	// map; a larger map state is refused for that endpoint.
	BPFPolicyMapMax uint32
	// BPFAttachMode is auto (tcx, else tc clsact), tcx or tc.
	BPFAttachMode string
}

var attachModes = map[string]loader.AttachMode{"auto": loader.AttachAuto, "tcx": loader.AttachTCX, "tc": loader.AttachTC}

// DefaultConfig has the defaults of the flags.
var DefaultConfig = Config{BPFRoot: bpfmap.DefaultRoot, BPFPolicyMapMax: policymap.DefaultMaxEntries, BPFAttachMode: "auto"}

// Flags registers --bpf-root and --bpf-policy-map-max.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("bpf-root", def.BPFRoot, "Directory on a bpffs to pin BPF maps and links under (a bpffs is mounted there if it is not on one)")
	fs.Uint32("bpf-policy-map-max", def.BPFPolicyMapMax, "Entries of each endpoint's BPF policy map; an endpoint whose policy needs more keeps its previous policy")
	fs.String("bpf-attach-mode", def.BPFAttachMode, "How endpoint programs attach: auto (tcx on Linux >= 6.6, else tc clsact), tcx or tc")
}

// Validate checks the flags.
func (c *Config) Validate() error {
	if c.BPFRoot == "" {
		return fmt.Errorf("--bpf-root must not be empty")
	}
	if c.BPFPolicyMapMax == 0 {
		return fmt.Errorf("--bpf-policy-map-max must be positive")
	}
	if _, ok := attachModes[c.BPFAttachMode]; !ok {
		return fmt.Errorf("--bpf-attach-mode %q is not one of auto, tcx, tc", c.BPFAttachMode)
	}
	return nil
}

type loaderParams struct {
	cell.In

	Config    Config
	Lifecycle cell.Lifecycle
	Log       *slog.Logger
}

func newLoader(p loaderParams) (*loader.Loader, error) {
	l, err := loader.New(p.Log, p.Config.BPFRoot, p.Config.BPFPolicyMapMax, loader.WithAttachMode(attachModes[p.Config.BPFAttachMode]))
	if err != nil {
		return nil, &cell.ConfigError{Err: err}
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error { return l.Open() },
		OnStop:  func(cell.HookContext) error { return l.Close() },
	})
	return l, nil
}
