package k8spods

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/apiary-net/apiary/policy/labels"
)

// NamespaceLabelPrefix prefixes the keys of a namespace's labels among
// its pods' labels, as in Cilium: k8s:io.cilium.k8s.namespace.labels.team=a.
const NamespaceLabelPrefix = "io.cilium.k8s.namespace.labels."

// Labels returns the labels of an endpoint of pod, in namespace ns (nil:
// unknown) of cluster: every label of the pod, every label of the
// namespace (prefixed), the pod's namespace, its service account and the
// cluster, all of source k8s.
func Labels(pod *corev1.Pod, ns *corev1.Namespace, cluster string) labels.Labels {
	out := make([]labels.Label, 0, len(pod.Labels)+8)
	for k, v := range pod.Labels {
		out = append(out, labels.New(labels.SourceK8s, k, v))
	}
	if ns != nil {
		for k, v := range ns.Labels {
			out = append(out, labels.New(labels.SourceK8s, NamespaceLabelPrefix+k, v))
		}
	}
	out = append(out, labels.New(labels.SourceK8s, labels.KeyPodNamespace, pod.Namespace))
	if sa := pod.Spec.ServiceAccountName; sa != "" {
		out = append(out, labels.New(labels.SourceK8s, labels.KeyServiceAccount, sa))
	}
	if cluster != "" {
		out = append(out, labels.New(labels.SourceK8s, labels.KeyPolicyCluster, cluster))
	}
	return labels.FromSlice(out)
}
