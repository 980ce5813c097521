package hubblecell

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/apiary-net/apiary/datapath/hubble"
)

// Config is the observer's configuration, in Cilium's flag names.
type Config struct {
	// EnableHubble switches the observer on.
	EnableHubble bool
	// HubbleSocketPath is the unix socket of the gRPC API.
	HubbleSocketPath string
	// HubbleListenAddress, when set, also serves the API on TCP (for a
	// relay), e.g. ":4244".
	HubbleListenAddress string
	// HubbleEventBufferCapacity is the number of flows kept.
	HubbleEventBufferCapacity int
	// HubbleDisableTLS serves --hubble-listen-address in plaintext;
	// otherwise it needs HubbleTLSCertFile and HubbleTLSKeyFile, and with
	// HubbleTLSClientCAFiles clients must present a certificate those CAs
	// signed (mTLS, as hubble-relay's).
	HubbleDisableTLS       bool
	HubbleTLSCertFile      string
	HubbleTLSKeyFile       string
	HubbleTLSClientCAFiles []string
	// HubbleMetricsServer, when set, serves Hubble's metrics on this
	// address, e.g. ":9965".
	HubbleMetricsServer string
	// HubbleMetrics lists the metrics to export: drop, flow, tcp, policy.
	HubbleMetrics []string
}

// DefaultSocketPath is where the observer listens unless
// --hubble-socket-path says otherwise (Cilium: /var/run/cilium/hubble.sock).
const DefaultSocketPath = "/var/run/apiary/hubble.sock"

// DefaultConfig has the defaults of the flags.
var DefaultConfig = Config{HubbleSocketPath: DefaultSocketPath, HubbleEventBufferCapacity: hubble.DefaultCapacity}

// Flags registers the --hubble-* flags and --enable-hubble.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Bool("enable-hubble", def.EnableHubble, "Enable the Hubble observer: flows of the datapath's events on Hubble's gRPC API")
	fs.String("hubble-socket-path", def.HubbleSocketPath, "Unix socket the Hubble API listens on")
	fs.String("hubble-listen-address", def.HubbleListenAddress, "Address the Hubble API also listens on for a relay, e.g. :4244 (none when empty)")
	fs.Int("hubble-event-buffer-capacity", def.HubbleEventBufferCapacity, "Number of flows the Hubble ring buffer keeps: a power of two minus one, at most 65535")
	fs.Bool("hubble-disable-tls", def.HubbleDisableTLS, "Serve --hubble-listen-address without TLS")
	fs.String("hubble-tls-cert-file", def.HubbleTLSCertFile, "PEM certificate of the Hubble server on --hubble-listen-address (reread at each handshake)")
	fs.String("hubble-tls-key-file", def.HubbleTLSKeyFile, "PEM private key of --hubble-tls-cert-file")
	fs.StringSlice("hubble-tls-client-ca-files", def.HubbleTLSClientCAFiles, "PEM CA certificates that sign the clients' certificates: clients must present one (mTLS)")
	fs.String("hubble-metrics-server", def.HubbleMetricsServer, "Address to serve Hubble's flow metrics on, e.g. :9965 (none when empty)")
	fs.StringSlice("hubble-metrics", def.HubbleMetrics, "Hubble metrics to export: drop, flow, tcp, policy (e.g. drop,flow,tcp; policy makes the datapath report a verdict for every new flow)")
}

// Validate checks the flags (only those that matter when enabled).
func (c *Config) Validate() error {
	if !c.EnableHubble {
		return nil
	}
	var errs []error
	if err := hubble.CheckCapacity(c.HubbleEventBufferCapacity); err != nil {
		errs = append(errs, fmt.Errorf("--hubble-event-buffer-capacity: %w", err))
	}
	if c.HubbleSocketPath == "" || !filepath.IsAbs(c.HubbleSocketPath) {
		errs = append(errs, fmt.Errorf("--hubble-socket-path: %q is not an absolute path", c.HubbleSocketPath))
	}
	for flag, addr := range map[string]string{"--hubble-listen-address": c.HubbleListenAddress, "--hubble-metrics-server": c.HubbleMetricsServer} {
		if addr == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not host:port: %w", flag, addr, err))
		}
	}
	if c.HubbleListenAddress != "" && !c.HubbleDisableTLS && (c.HubbleTLSCertFile == "" || c.HubbleTLSKeyFile == "") {
		errs = append(errs, errors.New("--hubble-listen-address needs --hubble-tls-cert-file and --hubble-tls-key-file, or --hubble-disable-tls"))
	}
	for _, m := range c.HubbleMetrics {
		if _, err := parseMetric(m); err != nil {
			errs = append(errs, fmt.Errorf("--hubble-metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}
