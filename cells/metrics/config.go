package metrics

import (
	"fmt"
	"net"
	"strconv"

	"github.com/spf13/pflag"
)

// Config is the configuration of the metrics cell.
type Config struct {
	// PrometheusServeAddr is the TCP address of the /metrics endpoint
	// ("127.0.0.1:9972", ":9972"); empty switches it off.
	PrometheusServeAddr string
}

// DefaultPort is apiary-agent's metrics port, the one of the shipped
// ConfigMap. Not cilium-agent's 9962: Cilium takes 9962 (agent), 9963
// (operator), 9964 (Envoy), 9965 (Hubble) and 9966 (Hubble Relay), and
// both agents run on a node during a migration. 9972 is the agent's
// 99x2 one decade up, free among Cilium's ports (4240, 4244, 4245,
// 4250, 4251, 6060-6062, 9878, 9879, 9890-9893, 9901, 9962-9966).
const DefaultPort = 9972

// DefaultConfig holds the defaults of the metrics flags.
var DefaultConfig = Config{}

// Flags registers --prometheus-serve-addr.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("prometheus-serve-addr", def.PrometheusServeAddr,
		fmt.Sprintf("Address to serve Prometheus metrics on, e.g. :%d (empty: do not serve)", DefaultPort))
}

// Validate checks that the address is host:port with a valid port.
func (c *Config) Validate() error {
	if c.PrometheusServeAddr == "" {
		return nil
	}
	_, port, err := net.SplitHostPort(c.PrometheusServeAddr)
	if err != nil {
		return fmt.Errorf("--prometheus-serve-addr: %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("--prometheus-serve-addr: port %q is not a number between 0 and 65535", port)
	}
	return nil
}
