package labels

import "github.com/spf13/pflag"

// Config is the label filter configuration (Cilium's --labels). The
// identity cell registers it and builds the Filter from it.
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
