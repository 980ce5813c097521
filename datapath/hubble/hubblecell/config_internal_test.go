package hubblecell

import (
	"strings"
	"testing"
)

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig
	ok.EnableHubble = true
	for _, tc := range []struct {
		name string
		give func(*Config)
		want string // "" for valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"disabled ignores the rest", func(c *Config) { c.EnableHubble, c.HubbleEventBufferCapacity = false, 3000 }, ""},
		{"capacity", func(c *Config) { c.HubbleEventBufferCapacity = 4096 }, "--hubble-event-buffer-capacity"},
		{"relative socket", func(c *Config) { c.HubbleSocketPath = "hubble.sock" }, "--hubble-socket-path"},
		{"listen address", func(c *Config) { c.HubbleListenAddress = "4244" }, "--hubble-listen-address"},
		{"metrics server", func(c *Config) { c.HubbleMetricsServer = "localhost" }, "--hubble-metrics-server"},
		{"metric", func(c *Config) { c.HubbleMetrics = []string{"flow", "http"} }, `--hubble-metrics: "http"`},
		{"all metrics", func(c *Config) { c.HubbleMetrics = []string{"flow", "drop", "tcp", "policy"} }, ""},
		{"listen without TLS files", func(c *Config) { c.HubbleListenAddress = ":4244" }, "--hubble-tls-cert-file"},
		{"listen in plaintext", func(c *Config) { c.HubbleListenAddress, c.HubbleDisableTLS = ":4244", true }, ""},
		{"listen with TLS", func(c *Config) {
			c.HubbleListenAddress, c.HubbleTLSCertFile, c.HubbleTLSKeyFile = ":4244", "/c.pem", "/k.pem"
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.give(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Validate() = %v, want an error naming %s", err, tc.want)
			}
		})
	}
}
