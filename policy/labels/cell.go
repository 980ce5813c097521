package labels

import (
	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/cells/cell"
)

// Cell provides the identity-relevant label *Filter configured by
// --labels (Cilium's flag): Cilium's default exclusions plus the user's
// include ("k8s:app") and exclude ("!k8s:tier") regular expressions. The
// endpoint manager filters pod labels with it before allocating an
// identity.
var Cell = cell.Module("labels-filter", "Identity-relevant label filter",
	cell.Config(Config{}),
	cell.Provide(newCellFilter),
)

// Config is the label filter configuration.
type Config struct {
	// Labels are extra label prefixes: regular expressions matched at the
	// start of the key, optionally with a source ("k8s:app") and inverted
	// with '!' ("!k8s:tier").
	Labels []string
}

// Flags registers --labels.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.StringSlice("labels", def.Labels,
		"Identity-relevant label prefixes on top of the defaults: regular expressions, optionally source-qualified (k8s:app) or excluded with ! (!k8s:tier)")
}

// Validate compiles the prefixes so a bad one stops the agent at once.
func (c *Config) Validate() error {
	_, err := NewFilter(c.Labels)
	return err
}

func newCellFilter(cfg Config) (*Filter, error) { return NewFilter(cfg.Labels) }
