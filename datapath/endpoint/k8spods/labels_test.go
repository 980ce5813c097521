package k8spods_test

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/datapath/endpoint/k8spods"
)

func TestLabels(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "prod", Name: "web-1", Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{ServiceAccountName: "web-sa"},
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod", Labels: map[string]string{"team": "a"}}}
	tests := []struct {
		name    string
		ns      *corev1.Namespace
		cluster string
		want    string
	}{
		{"everything", ns, "c1",
			"k8s:app=web,k8s:io.cilium.k8s.namespace.labels.team=a,k8s:io.cilium.k8s.policy.cluster=c1," +
				"k8s:io.cilium.k8s.policy.serviceaccount=web-sa,k8s:io.kubernetes.pod.namespace=prod"},
		{"namespace unknown, no cluster", nil, "",
			"k8s:app=web,k8s:io.cilium.k8s.policy.serviceaccount=web-sa,k8s:io.kubernetes.pod.namespace=prod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := k8spods.Labels(pod, tt.ns, tt.cluster).String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
