package hubblecell

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/datapath/hubble"
)

// podWorkloads returns the controller of a pod as Hubble names it: the
// Deployment behind a ReplicaSet (the ReplicaSet's name is the
// Deployment's plus "-<pod-template-hash>"), the CronJob behind a Job
// ("<cronjob>-<scheduled minute>"), else the controller itself
// (StatefulSet, DaemonSet, ...). A pod without a controller has none.
func podWorkloads(pod *corev1.Pod) []hubble.Workload {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return nil
	}
	kind, name := ref.Kind, ref.Name
	switch kind {
	case "ReplicaSet":
		if hash, ok := pod.Labels["pod-template-hash"]; ok && strings.HasSuffix(name, "-"+hash) {
			kind, name = "Deployment", strings.TrimSuffix(name, "-"+hash)
		}
	case "Job":
		if i := strings.LastIndexByte(name, '-'); i > 0 && len(name)-i-1 >= 8 && allDigits(name[i+1:]) {
			kind, name = "CronJob", name[:i]
		}
	}
	return []hubble.Workload{{Kind: kind, Name: name}}
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
