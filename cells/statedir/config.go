package statedir

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/pflag"
)

// DefaultStateDir is the state directory unless --state-dir says otherwise.
const DefaultStateDir = "/var/run/apiary"

// Config is the configuration of the statedir cell.
type Config struct {
	// StateDir is the directory for state that survives restarts.
	StateDir string
}

// DefaultConfig holds the default of --state-dir.
var DefaultConfig = Config{StateDir: DefaultStateDir}

// Flags registers --state-dir.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("state-dir", def.StateDir, "Directory for state that survives agent restarts")
}

// Validate checks that the state directory is an absolute path.
func (c *Config) Validate() error {
	if c.StateDir == "" {
		return fmt.Errorf("--state-dir: must not be empty")
	}
	if !filepath.IsAbs(c.StateDir) {
		return fmt.Errorf("--state-dir: %q is not an absolute path", c.StateDir)
	}
	c.StateDir = filepath.Clean(c.StateDir)
	return nil
}
