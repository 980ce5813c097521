package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/containernetworking/cni/pkg/version"

	"github.com/apiary-net/apiary/cells/api/client"
)

// PluginType is the "type" of the plugin in a network configuration.
const PluginType = "apiary-cni"

// defaultTimeout bounds one command when the configuration says nothing.
const defaultTimeout = 2 * time.Minute

// NetConf is the plugin's network configuration (one entry of a
// conflist's "plugins").
type NetConf struct {
	types.PluginConf
	// SocketPath is the agent's API socket.
	SocketPath string `json:"socket-path,omitempty"`
	// LogFile, when set, is where the plugin appends its log; LogLevel
	// is debug, info (the default), warn or error.
	LogFile  string `json:"log-file,omitempty"`
	LogLevel string `json:"log-level,omitempty"`
	// Labels are labels every endpoint of the network gets
	// ("source:key=value" or "key=value"), before those of APIARY_LABELS.
	Labels []string `json:"labels,omitempty"`
	// Args are the runtime's per-container values (CNI conventions);
	// args.cni.labels come after Labels and before APIARY_LABELS.
	Args *conventionArgs `json:"args,omitempty"`
	// Timeout bounds one command ("2m" when empty).
	Timeout string `json:"timeout,omitempty"`

	timeout  time.Duration
	logLevel slog.Level
	labels   []string // Labels, then args.cni.labels, checked
}

// parseConfig decodes and checks the network configuration; the error
// names the wrong field.
func parseConfig(data []byte) (*NetConf, error) {
	conf := &NetConf{}
	if err := json.Unmarshal(data, conf); err != nil {
		return nil, fmt.Errorf("decode network configuration: %w", err)
	}
	if err := version.ParsePrevResult(&conf.PluginConf); err != nil {
		return nil, fmt.Errorf("decode network configuration: field prevResult: %w", err)
	}
	var errs []error
	if conf.Type != PluginType {
		errs = append(errs, fmt.Errorf("field type: %q is not %q", conf.Type, PluginType))
	}
	if conf.SocketPath == "" {
		conf.SocketPath = client.DefaultSocketPath
	} else if !filepath.IsAbs(conf.SocketPath) {
		errs = append(errs, fmt.Errorf("field socket-path: %q is not an absolute path", conf.SocketPath))
	}
	if conf.LogFile != "" && !filepath.IsAbs(conf.LogFile) {
		errs = append(errs, fmt.Errorf("field log-file: %q is not an absolute path", conf.LogFile))
	}
	if conf.LogLevel != "" {
		if err := conf.logLevel.UnmarshalText([]byte(conf.LogLevel)); err != nil {
			errs = append(errs, fmt.Errorf("field log-level: %q is not debug, info, warn or error", conf.LogLevel))
		}
	}
	ls, err := configLabels(conf)
	if err != nil {
		errs = append(errs, err)
	}
	conf.labels = ls
	conf.timeout = defaultTimeout
	if conf.Timeout != "" {
		d, err := time.ParseDuration(conf.Timeout)
		if err != nil || d <= 0 {
			errs = append(errs, fmt.Errorf("field timeout: %q is not a positive duration", conf.Timeout))
		}
		conf.timeout = d
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("network configuration %q: %w", conf.Name, err)
	}
	return conf, nil
}
