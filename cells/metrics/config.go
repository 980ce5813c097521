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
	// ("127.0.0.1:9962", ":9962"); empty switches it off.
	PrometheusServeAddr string
}

// DefaultConfig holds the defaults of the metrics flags.
var DefaultConfig = Config{}

// Flags registers --prometheus-serve-addr.
func (def Config) Flags(flags *pflag.FlagSet) {
	flags.String("prometheus-serve-addr", def.PrometheusServeAddr,
		"Address to serve Prometheus metrics on, e.g. :9962 (empty: do not serve)")
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
