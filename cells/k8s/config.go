package k8s

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/spf13/pflag"
)

// Config configures the Kubernetes client.
type Config struct {
	// K8sKubeconfigPath is a kubeconfig file; it wins over K8sAPIServer
	// and the in-cluster configuration.
	K8sKubeconfigPath string
	// K8sAPIServer is the API server's URL (http(s)://host:port); with a
	// kubeconfig it overrides the file's server.
	K8sAPIServer string
	// K8sClientQPS and K8sClientBurst bound the client's request rate.
	K8sClientQPS   float64
	K8sClientBurst int
	// K8sSyncTimeout is how long the agent waits for its Kubernetes
	// caches before regenerating endpoints without them (logged once).
	K8sSyncTimeout time.Duration
	// K8sHeartbeatTimeout bounds one status probe of the API server.
	K8sHeartbeatTimeout time.Duration
	// K8sServiceProxyName is the value of the Services' and
	// EndpointSlices' service.kubernetes.io/service-proxy-name label
	// this agent handles; empty: those without the label (kube-proxy's
	// and Cilium's rule, KEP-2447).
	K8sServiceProxyName string
}

// DefaultConfig holds Cilium's defaults.
var DefaultConfig = Config{
	K8sClientQPS:        10,
	K8sClientBurst:      20,
	K8sSyncTimeout:      3 * time.Minute,
	K8sHeartbeatTimeout: 30 * time.Second,
}

// Flags registers the --k8s-* flags.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.String("k8s-kubeconfig-path", def.K8sKubeconfigPath,
		"Kubeconfig file of the Kubernetes API server (default: in-cluster service account, when present)")
	fs.String("k8s-api-server", def.K8sAPIServer, "Kubernetes API server URL")
	fs.Float64("k8s-client-qps", def.K8sClientQPS, "Queries per second to the Kubernetes API server")
	fs.Int("k8s-client-burst", def.K8sClientBurst, "Burst of queries to the Kubernetes API server")
	fs.Duration("k8s-sync-timeout", def.K8sSyncTimeout,
		"How long to wait for the Kubernetes caches before regenerating endpoints without them")
	fs.Duration("k8s-heartbeat-timeout", def.K8sHeartbeatTimeout,
		"Timeout of one health check of the Kubernetes API server")
	fs.String("k8s-service-proxy-name", def.K8sServiceProxyName,
		"Value of the service.kubernetes.io/service-proxy-name label of the Services this agent handles (empty: those without the label)")
}

// Validate checks the rate limits and timeouts.
func (c *Config) Validate() error {
	switch {
	case c.K8sClientQPS <= 0:
		return fmt.Errorf("--k8s-client-qps: %v is not positive", c.K8sClientQPS)
	case c.K8sClientBurst < 1:
		return fmt.Errorf("--k8s-client-burst: %d is not positive", c.K8sClientBurst)
	case c.K8sSyncTimeout <= 0:
		return fmt.Errorf("--k8s-sync-timeout: %s is not positive", c.K8sSyncTimeout)
	case c.K8sHeartbeatTimeout <= 0:
		return fmt.Errorf("--k8s-heartbeat-timeout: %s is not positive", c.K8sHeartbeatTimeout)
	}
	if n := c.K8sServiceProxyName; n != "" {
		if errs := validation.IsValidLabelValue(n); len(errs) > 0 {
			return fmt.Errorf("--k8s-service-proxy-name: %q is not a label value: %s", n, strings.Join(errs, "; "))
		}
	}
	return nil
}
