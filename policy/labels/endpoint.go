package labels

import (
	"errors"
	"fmt"
	"strings"
)

// agentSources are the label sources only the agent derives: reserved
// identities, CIDR identities, FQDN selectors and generated identity
// labels (the named-ports label). An endpoint that
// brought one of them could take an identity a policy gives to others
// (a fromCIDR rule admitting a pod because it claims cidr:192.168.0.0/16).
var agentSources = []string{SourceReserved, SourceCIDR, SourceFQDN, SourceGen}

// CheckEndpointLabels refuses the labels an endpoint may not bring
// itself: any of the sources the agent derives (reserved, cidr, fqdn,
// gen; in any case: "RESERVED:world" too), and the cluster label when it names another
// cluster than cluster (the agent adds this cluster's; empty cluster
// skips that check). The error names every such label.
func CheckEndpointLabels(ls Labels, cluster string) error {
	var errs []error
	for _, l := range ls {
		for _, s := range agentSources {
			if strings.EqualFold(l.Source, s) {
				errs = append(errs, fmt.Errorf("label %s: source %q belongs to the agent, an endpoint may not carry it", l, s))
			}
		}
		if l.Key == KeyPolicyCluster && cluster != "" && l.Value != cluster {
			errs = append(errs, fmt.Errorf("label %s: names cluster %q, but this is cluster %q", l, l.Value, cluster))
		}
	}
	return errors.Join(errs...)
}
