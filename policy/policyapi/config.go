package policyapi

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Config holds the agent flags that change how policies are translated.
// The policy cell registers it with cell.Config(api.DefaultConfig).
type Config struct {
	// PolicyDefaultLocalCluster makes endpoint selectors that say nothing
	// about io.cilium.k8s.policy.cluster select only endpoints of the local
	// cluster (Cilium's --policy-default-local-cluster, on by default
	// since Cilium 1.19). Off, such selectors match endpoints of every
	// meshed cluster.
	PolicyDefaultLocalCluster bool
	// PolicyMaxDocumentSize is Limits.MaxDocumentSize: the bytes one
	// policy document may decode to, YAML aliases expanded.
	PolicyMaxDocumentSize int64
	// PolicyMaxInputSize is Limits.MaxInputSize: the bytes of one input
	// (a --policy-dir file, a PUT /v1/policy body), raw and decoded.
	PolicyMaxInputSize int64
}

// DefaultConfig is the default: selectors are local to this cluster,
// the default Limits.
var DefaultConfig = Config{
	PolicyDefaultLocalCluster: true,
	PolicyMaxDocumentSize:     DefaultMaxDocumentSize,
	PolicyMaxInputSize:        DefaultMaxInputSize,
}

// Flags registers --policy-default-local-cluster,
// --policy-max-document-size and --policy-max-input-size.
func (def Config) Flags(fs *pflag.FlagSet) {
	fs.Bool("policy-default-local-cluster", def.PolicyDefaultLocalCluster,
		"Endpoint selectors in policies that do not name a cluster (io.cilium.k8s.policy.cluster) select only the local cluster")
	fs.Int64(FlagMaxDocumentSize, def.PolicyMaxDocumentSize,
		"Most bytes one policy document may decode to, as JSON with YAML aliases expanded")
	fs.Int64(FlagMaxInputSize, def.PolicyMaxInputSize,
		"Most bytes of one policy input (a --policy-dir file, an API import), read and decoded")
}

// Validate checks that the limits are positive.
func (c *Config) Validate() error {
	var errs []error
	if c.PolicyMaxDocumentSize < 1 {
		errs = append(errs, fmt.Errorf("--%s: %d is not positive", FlagMaxDocumentSize, c.PolicyMaxDocumentSize))
	}
	if c.PolicyMaxInputSize < 1 {
		errs = append(errs, fmt.Errorf("--%s: %d is not positive", FlagMaxInputSize, c.PolicyMaxInputSize))
	}
	return errors.Join(errs...)
}

// Limits returns the limits the flags set.
func (c Config) Limits() Limits {
	return Limits{MaxDocumentSize: c.PolicyMaxDocumentSize, MaxInputSize: c.PolicyMaxInputSize}
}

// Options tell the parsers about the agent they translate for.
type Options struct {
	// ClusterName is the local cluster (--cluster-name). It is the value
	// of the cluster label injected by DefaultLocalCluster and of the
	// cluster entity.
	ClusterName string
	// DefaultLocalCluster is Config.PolicyDefaultLocalCluster. Note that
	// the zero Options leave it off; start from DefaultOptions.
	DefaultLocalCluster bool
	// DefaultNamespace is the namespace of namespaced documents without
	// metadata.namespace, as kubectl would use it; "default" when empty.
	DefaultNamespace string
	// Limits bound the size of inputs and documents; zero fields are
	// the defaults.
	Limits Limits
}

// DefaultOptions returns the options of an agent with Cilium's defaults:
// cluster "default", selectors local to it, namespace "default".
func DefaultOptions() Options {
	return Options{ClusterName: "default", DefaultLocalCluster: true, DefaultNamespace: "default", Limits: DefaultLimits()}
}

// NewOptions returns the options for an agent in cluster clusterName
// with the given Config.
func NewOptions(clusterName string, cfg Config) Options {
	o := DefaultOptions()
	o.ClusterName = clusterName
	o.DefaultLocalCluster = cfg.PolicyDefaultLocalCluster
	o.Limits = cfg.Limits()
	return o
}

// Validate checks that the names can appear in labels and the limits.
func (o Options) Validate() error {
	errs := []error{o.Limits.Validate()}
	if o.ClusterName == "" {
		errs = append(errs, errors.New("cluster name is required"))
	} else if msg := checkLabelValue(o.ClusterName); msg != "" {
		errs = append(errs, fmt.Errorf("cluster name %q: %s", o.ClusterName, msg))
	}
	if o.DefaultNamespace != "" {
		if msg := checkDNSLabel(o.DefaultNamespace); msg != "" {
			errs = append(errs, fmt.Errorf("default namespace %q: %s", o.DefaultNamespace, msg))
		}
	}
	return errors.Join(errs...)
}

func (o Options) namespaceOrDefault(ns string) string {
	switch {
	case ns != "":
		return ns
	case o.DefaultNamespace != "":
		return o.DefaultNamespace
	}
	return "default"
}
