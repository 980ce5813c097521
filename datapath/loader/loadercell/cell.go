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
	"github.com/apiary-net/apiary/policy"
)

// Cell provides the *loader.Loader, open between start and stop, and
// the control plane's datapath.Loader, datapath.PolicyMapWriter and
// datapath.IPCacheMapWriter and datapath.LBMapWriter backed by it
// (Datapath). It owns
// --bpf-policy-map-max, the size of the policy maps it creates, and
// provides it as the policy.MapStateLimit that trace reports against.
var Cell = cell.Module("bpf-loader", "BPF loader: endpoint programs, pinned maps and tcx links",
	cell.Config(DefaultConfig),
	cell.Provide(
		newLoader,
		newDatapath,
		func(d *Datapath) datapath.Loader { return d },
		func(d *Datapath) datapath.PolicyMapWriter { return d },
		func(d *Datapath) datapath.IPCacheMapWriter { return d },
		func(d *Datapath) datapath.LBMapWriter { return d },
		func(c Config) policy.MapStateLimit { return policy.MapStateLimit(c.BPFPolicyMapMax) },
	),
)

// Config is the loader's configuration.
type Config struct {
	// BPFRoot is the bpffs directory maps and links are pinned under.
	BPFRoot string
	// BPFAttachMode is auto (tcx, else tc clsact), tcx or tc.
	BPFAttachMode string
	// BPFPolicyMapMax is the number of keys each endpoint's policy map
	// holds (Cilium's --bpf-policy-map-max); a map state with more keys
	// is refused for that endpoint.
	BPFPolicyMapMax int
}

var attachModes = map[string]loader.AttachMode{"auto": loader.AttachAuto, "tcx": loader.AttachTCX, "tc": loader.AttachTC}

// DefaultConfig has the defaults of the flags; the policy map size is
// the map's own default (Cilium's).
var DefaultConfig = Config{BPFRoot: bpfmap.DefaultRoot, BPFAttachMode: "auto", BPFPolicyMapMax: policymap.DefaultMaxEntries}

// maxPolicyMapMax bounds --bpf-policy-map-max (the kernel's hash maps
// take more, but a policy map of millions of keys is a mistake).
const maxPolicyMapMax = 1 << 20

// Flags registers --bpf-root, --bpf-attach-mode and --bpf-policy-map-max.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("bpf-root", def.BPFRoot, "Directory on a bpffs to pin BPF maps and links under (a bpffs is mounted there if it is not on one)")
	fs.String("bpf-attach-mode", def.BPFAttachMode, "How endpoint programs attach: auto (tcx on Linux >= 6.6, else tc clsact), tcx or tc")
	fs.Int("bpf-policy-map-max", def.BPFPolicyMapMax, "Maximum number of keys in an endpoint's policy map")
}

// Validate checks the flags.
func (c *Config) Validate() error {
	if c.BPFRoot == "" {
		return fmt.Errorf("--bpf-root must not be empty")
	}
	if _, ok := attachModes[c.BPFAttachMode]; !ok {
		return fmt.Errorf("--bpf-attach-mode %q is not one of auto, tcx, tc", c.BPFAttachMode)
	}
	if c.BPFPolicyMapMax < 1 || c.BPFPolicyMapMax > maxPolicyMapMax {
		return fmt.Errorf("--bpf-policy-map-max: %d is not between 1 and %d", c.BPFPolicyMapMax, maxPolicyMapMax)
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
	l, err := loader.New(p.Log, p.Config.BPFRoot, uint32(p.Config.BPFPolicyMapMax), loader.WithAttachMode(attachModes[p.Config.BPFAttachMode]))
	if err != nil {
		return nil, &cell.ConfigError{Err: err}
	}
	p.Lifecycle.Append(cell.Hook{
		OnStart: func(cell.HookContext) error { return l.Open() },
		OnStop:  func(cell.HookContext) error { return l.Close() },
	})
	return l, nil
}
