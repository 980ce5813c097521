package plugin

import (
	"errors"
	"fmt"
	"strings"

	"github.com/apiary-net/apiary/policy/labels"
)

// The CNI_ARGS keys the plugin reads; others are ignored (as if
// IgnoreUnknown were always set: runtimes pass keys for other plugins).
const (
	argPodNamespace = "K8S_POD_NAMESPACE"
	argPodName      = "K8S_POD_NAME"
	argLabels       = "APIARY_LABELS"
)

// cniArgs are the keys of CNI_ARGS the plugin uses.
type cniArgs struct {
	podNamespace, podName string
	// labels are those of APIARY_LABELS, "key=value" each.
	labels []string
}

// parseArgs reads CNI_ARGS, "K1=V1;K2=V2". A value may hold '='
// (APIARY_LABELS=app=web,tier=db), so only the first '=' splits.
func parseArgs(s string) (cniArgs, error) {
	var out cniArgs
	if s == "" {
		return out, nil
	}
	for pair := range strings.SplitSeq(s, ";") {
		if pair == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		if !ok {
			return out, fmt.Errorf("CNI_ARGS: %q is not KEY=VALUE", pair)
		}
		switch k {
		case argPodNamespace:
			out.podNamespace = v
		case argPodName:
			out.podName = v
		case argLabels:
			ls, err := splitLabels(v)
			if err != nil {
				return out, fmt.Errorf("CNI_ARGS %s: %w", argLabels, err)
			}
			out.labels = ls
		}
	}
	return out, nil
}

// splitLabels splits "app=web,tier=db" and checks each label.
func splitLabels(v string) ([]string, error) {
	var out []string
	for l := range strings.SplitSeq(v, ",") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if err := checkLabel(l); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New("no label (want key=value[,key=value...])")
	}
	return out, nil
}

// checkLabel parses one label and refuses the sources the agent derives
// itself (reserved, cidr, fqdn), as the agent would, before anything is
// sent. The cluster label is the agent's to check: it knows its cluster.
func checkLabel(s string) error {
	l, err := labels.Parse(s, labels.SourceK8s)
	if err != nil {
		return err
	}
	return labels.CheckEndpointLabels(labels.Labels{l}, "")
}

// endpointLabels are the labels of a new endpoint: the network's
// ("labels", then "args.cni.labels"), then APIARY_LABELS, then the pod's namespace in Kubernetes (the label
// namespaced policies select on; the agent adds the pod's own labels).
func endpointLabels(conf *NetConf, a cniArgs) ([]string, error) {
	out := append(append([]string(nil), conf.labels...), a.labels...)
	if a.podNamespace != "" && !hasKey(out, labels.KeyPodNamespace) {
		out = append(out, labels.KeyPodNamespace+"="+a.podNamespace)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no labels for the endpoint: outside Kubernetes set %s=key=value,... in CNI_ARGS, or \"labels\" or \"args.cni.labels\" in the network configuration", argLabels)
	}
	return out, nil
}

// hasKey says whether one of ls has key.
func hasKey(ls []string, key string) bool {
	for _, s := range ls {
		if l, err := labels.Parse(s, labels.SourceK8s); err == nil && l.Key == key {
			return true
		}
	}
	return false
}
