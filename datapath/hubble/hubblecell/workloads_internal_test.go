package hubblecell

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodWorkloads(t *testing.T) {
	yes := true
	pod := func(kind, name string, lbls map[string]string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: lbls}}
		if kind != "" {
			p.OwnerReferences = []metav1.OwnerReference{
				{Kind: "Other", Name: "not-the-controller"},
				{Kind: kind, Name: name, Controller: &yes},
			}
		}
		return p
	}
	for _, tc := range []struct {
		name string
		give *corev1.Pod
		want string
	}{
		{"deployment", pod("ReplicaSet", "web-5d8f9c7b4", map[string]string{"pod-template-hash": "5d8f9c7b4"}), "[{Deployment web}]"},
		{"bare replicaset", pod("ReplicaSet", "web-rs", nil), "[{ReplicaSet web-rs}]"},
		{"cronjob", pod("Job", "backup-29012345", nil), "[{CronJob backup}]"},
		{"job", pod("Job", "migrate-1", nil), "[{Job migrate-1}]"},
		{"statefulset", pod("StatefulSet", "db", nil), "[{StatefulSet db}]"},
		{"no controller", pod("", "", nil), "[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fmt.Sprint(podWorkloads(tc.give)); got != tc.want {
				t.Errorf("workloads %s, want %s", got, tc.want)
			}
		})
	}
}
