package hostport_test

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiary-net/apiary/datapath/svcmanager"
	"github.com/apiary-net/apiary/datapath/svcmanager/hostport"
	"github.com/apiary-net/apiary/datapath/svcmanager/svcmanagertest"
)

func pod(ips []string, ports ...corev1.ContainerPort) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ingress", Name: "nginx-1"},
		Spec:   corev1.PodSpec{NodeName: "node1", Containers: []corev1.Container{{Name: "nginx", Ports: ports}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, ip := range ips {
		p.Status.PodIPs = append(p.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	return p
}

// TestFromPod: each hostPort of a pod is a HostPort frontend (its hostIP,
// else the unspecified address of each family the pod has an address
// of, which Desired expands to the node's addresses) balanced to the
// pod's containerPort only; pods without host ports, of the host's
// network, finished, being deleted or without an address have none; a
// bad hostIP is named.
func TestFromPod(t *testing.T) {
	node := svcmanager.Node{Name: "node1", Addrs: []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")}}
	render := func(svc *svcmanager.Service) []string {
		if svc == nil {
			return nil
		}
		var out []string
		for _, lb := range svcmanager.Desired(svc, nil, node) {
			out = append(out, svcmanagertest.Render(lb))
		}
		return append(out, svc.Warnings...)
	}
	http := corev1.ContainerPort{ContainerPort: 80, HostPort: 8080}
	dns := corev1.ContainerPort{ContainerPort: 53, HostPort: 53, Protocol: corev1.ProtocolUDP, HostIP: "192.0.2.10"}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string
	}{{
		name: "dual-stack pod, a hostPort on every address and one on a hostIP",
		pod:  pod([]string{"10.0.1.5", "fd00::5"}, http, dns, corev1.ContainerPort{ContainerPort: 9090}),
		want: []string{
			"0.0.0.0:8080/TCP HostPort -> 10.0.1.5:80/TCP(active)",
			"192.0.2.10:53/UDP HostPort -> 10.0.1.5:53/UDP(active)",
			"192.0.2.10:8080/TCP HostPort -> 10.0.1.5:80/TCP(active)",
			"[::]:8080/TCP HostPort -> [fd00::5]:80/TCP(active)",
			"[2001:db8::10]:8080/TCP HostPort -> [fd00::5]:80/TCP(active)",
		},
	}, {
		name: "no host port",
		pod:  pod([]string{"10.0.1.5"}, corev1.ContainerPort{ContainerPort: 80}),
	}, {
		name: "no address yet",
		pod:  pod(nil, http),
	}, {
		name: "a hostIP of no family of the pod's, and one that does not parse",
		pod: pod([]string{"10.0.1.5"}, corev1.ContainerPort{ContainerPort: 80, HostPort: 8080, HostIP: "2001:db8::10"},
			corev1.ContainerPort{ContainerPort: 81, HostPort: 8081, HostIP: "192.0.2.300"}),
		want: []string{
			"spec.containers[0].ports[0].hostIP: 2001:db8::10 is of no family of the pod's addresses",
			`spec.containers[0].ports[1].hostIP: "192.0.2.300" is not an IP address`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render(hostport.FromPod(tt.pod, "node1")); !slices.Equal(got, tt.want) {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
	for i, mutate := range []func(*corev1.Pod){
		func(p *corev1.Pod) { p.Spec.HostNetwork = true },
		func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
		func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed },
		func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{} },
	} {
		p := pod([]string{"10.0.1.5"}, http)
		mutate(p)
		if svc := hostport.FromPod(p, "node1"); svc != nil {
			t.Errorf("case %d: %s", i, fmt.Sprint(render(svc)))
		}
	}
}
