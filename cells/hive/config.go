package hive

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config is the hive's own configuration.
type Config struct {
	// ConfigDir is a directory with one file per flag (a Kubernetes
	// ConfigMap mount); file contents are flag values.
	ConfigDir string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// LogFormat is text or json.
	LogFormat string
	// HiveStartTimeout bounds all start hooks together.
	HiveStartTimeout time.Duration
	// HiveStopTimeout bounds all stop hooks together.
	HiveStopTimeout time.Duration
}

// DefaultConfig holds the defaults of the hive's flags.
var DefaultConfig = Config{
	LogLevel:         "info",
	LogFormat:        "text",
	HiveStartTimeout: 5 * time.Minute,
	HiveStopTimeout:  time.Minute,
}

// Flags registers the hive's flags.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("config-dir", def.ConfigDir, "Directory with one file per flag; a file's content is the flag's value")
	flags.String("log-level", def.LogLevel, "Log level: debug, info, warn or error")
	flags.String("log-format", def.LogFormat, "Log format: text or json")
	flags.Duration("hive-start-timeout", def.HiveStartTimeout, "Time allowed for all start hooks")
	flags.Duration("hive-stop-timeout", def.HiveStopTimeout, "Time allowed for all stop hooks")
}

// Validate checks the log settings and timeouts.
func (c *Config) Validate() error {
	if _, err := parseLevel(c.LogLevel); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("--log-format: %q is not text or json", c.LogFormat)
	}
	if c.HiveStartTimeout <= 0 {
		return fmt.Errorf("--hive-start-timeout: must be positive, got %s", c.HiveStartTimeout)
	}
	if c.HiveStopTimeout <= 0 {
		return fmt.Errorf("--hive-stop-timeout: must be positive, got %s", c.HiveStopTimeout)
	}
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not debug, info, warn or error", s)
}
