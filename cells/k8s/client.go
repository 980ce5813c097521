package k8s

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiary-net/apiary/cells/cell"
)

// Clientset is the agent's Kubernetes client: REST clients of the
// built-in API groups it reads (protobuf), the dynamic client (for CRDs
// read as unstructured objects) and where its configuration came from.
// It is not client-go's kubernetes.Interface on purpose: that clientset
// links every API group of k8s.io/api (hack/check-layers.sh keeps it out
// of the agent); tests may use it through k8stest.
type Clientset interface {
	// IsEnabled reports whether Kubernetes is configured. When it is not,
	// no other method may be called.
	IsEnabled() bool
	// CoreV1 returns the REST client of the core/v1 API (/api/v1); it
	// also serves paths outside the groups (AbsPath("/version")).
	CoreV1() rest.Interface
	// DiscoveryV1 returns the REST client of discovery.k8s.io/v1.
	DiscoveryV1() rest.Interface
	// NetworkingV1 returns the REST client of networking.k8s.io/v1.
	NetworkingV1() rest.Interface
	// Dynamic returns the dynamic client.
	Dynamic() dynamic.Interface
	// RestConfig returns a copy of the client configuration.
	RestConfig() *rest.Config
	// Source says where the configuration came from.
	Source() string
}

// ErrDisabled is returned by what needs Kubernetes when it is not
// configured.
var ErrDisabled = errors.New("kubernetes is not configured (no --k8s-kubeconfig-path, --k8s-api-server or in-cluster service account)")

// serviceAccountTokenFile is where a pod's service account token is
// mounted; with $KUBERNETES_SERVICE_HOST it enables the in-cluster
// configuration.
var serviceAccountTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

type clientset struct {
	core, discovery, networking rest.Interface

	dyn    dynamic.Interface
	cfg    *rest.Config
	http   *http.Client
	source string
}

var _ Clientset = (*clientset)(nil)

func (c *clientset) IsEnabled() bool              { return c.cfg != nil }
func (c *clientset) CoreV1() rest.Interface       { return c.core }
func (c *clientset) DiscoveryV1() rest.Interface  { return c.discovery }
func (c *clientset) NetworkingV1() rest.Interface { return c.networking }
func (c *clientset) Dynamic() dynamic.Interface   { return c.dyn }
func (c *clientset) RestConfig() *rest.Config     { return rest.CopyConfig(c.cfg) }
func (c *clientset) Source() string               { return c.source }

// restConfig builds the client configuration from the flags, or from the
// pod's service account; nil (and no error) means Kubernetes is not
// configured.
func restConfig(c Config) (*rest.Config, string, error) {
	var (
		cfg    *rest.Config
		source string
		err    error
	)
	switch {
	case c.K8sKubeconfigPath != "":
		source = "kubeconfig " + c.K8sKubeconfigPath
		cfg, err = clientcmd.BuildConfigFromFlags(c.K8sAPIServer, c.K8sKubeconfigPath)
		if err != nil {
			return nil, "", fmt.Errorf("read --k8s-kubeconfig-path: %w", err)
		}
	case c.K8sAPIServer != "":
		source = "--k8s-api-server " + c.K8sAPIServer
		cfg, err = clientcmd.BuildConfigFromFlags(c.K8sAPIServer, "")
		if err != nil {
			return nil, "", fmt.Errorf("--k8s-api-server: %w", err)
		}
	case os.Getenv("KUBERNETES_SERVICE_HOST") != "" && fileExists(serviceAccountTokenFile):
		source = "in-cluster service account"
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, "", fmt.Errorf("read the in-cluster configuration: %w", err)
		}
	default:
		return nil, "", nil
	}
	cfg.QPS = float32(c.K8sClientQPS)
	cfg.Burst = c.K8sClientBurst
	cfg.UserAgent = "apiary-agent"
	return cfg, source, nil
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// newClientset reads the configuration; it connects to nothing (the
// status probe and the informers do, once started). Its idle connections
// are closed when the hive stops.
func newClientset(c Config, lc cell.Lifecycle, log *slog.Logger) (Clientset, error) {
	cfg, source, err := restConfig(c)
	if err != nil || cfg == nil {
		return &clientset{}, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("create the Kubernetes HTTP client: %w", err)
	}
	cs := &clientset{cfg: cfg, http: hc, source: source}
	// The built-in types travel as protobuf (typedREST); custom resources
	// only speak JSON (dynamic).
	if cs.core, err = typedREST(cfg, hc, corev1.SchemeGroupVersion, "/api"); err != nil {
		return nil, err
	}
	if cs.discovery, err = typedREST(cfg, hc, discoveryv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	if cs.networking, err = typedREST(cfg, hc, networkingv1.SchemeGroupVersion, "/apis"); err != nil {
		return nil, err
	}
	cs.dyn, err = dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("create the Kubernetes dynamic client: %w", err)
	}
	// client-go logs through klog; send it to the agent's log.
	setKlogLogger(log.With("subsys", "client-go"))
	lc.Append(cell.Hook{
		OnStart: func(cell.HookContext) error {
			log.Info("Kubernetes client configured", "source", source, "server", cfg.Host)
			return nil
		},
		OnStop: func(cell.HookContext) error {
			hc.CloseIdleConnections()
			return nil
		},
	})
	return cs, nil
}
