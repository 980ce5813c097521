package k8spolicy

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestNetworkPolicyValueIsItsJSON: the value the watcher parses for a
// NetworkPolicy is what decoding its JSON gives, as the watcher parsed
// before (encode, then decode).
func TestNetworkPolicyValueIsItsJSON(t *testing.T) {
	tcp, udp := corev1.ProtocolTCP, corev1.ProtocolUDP
	port, named, end := intstr.FromInt32(80), intstr.FromString("http"), int32(90)
	full := &networkingv1.NetworkPolicy{
		ObjectMeta: metav1.ObjectMeta{
			Name: "np", Namespace: "ns", UID: types.UID("0a1b"), ResourceVersion: "42", Generation: 3,
			CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			Labels:            map[string]string{"app": "web"}, Annotations: map[string]string{"note": "é"},
		},
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
			Ingress: []networkingv1.NetworkPolicyIngressRule{{
				From: []networkingv1.NetworkPolicyPeer{
					{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}},
						NamespaceSelector: &metav1.LabelSelector{}},
					{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
				},
				Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: &port, EndPort: &end}, {Protocol: &udp, Port: &named}},
			}},
			Egress:      []networkingv1.NetworkPolicyEgressRule{{}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		},
	}
	for name, np := range map[string]*networkingv1.NetworkPolicy{
		"full":  full,
		"empty": {ObjectMeta: metav1.ObjectMeta{Name: "empty", Namespace: "ns"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, err := networkPolicyValue(np)
			if err != nil {
				t.Fatal(err)
			}
			typed := np.DeepCopy()
			typed.APIVersion, typed.Kind = "networking.k8s.io/v1", "NetworkPolicy"
			data, err := json.Marshal(typed)
			if err != nil {
				t.Fatal(err)
			}
			var want unstructured.Unstructured
			if err := want.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want.Object) {
				t.Fatalf("value\n%#v\nwant (decoded from %s)\n%#v", got, data, want.Object)
			}
			if np.APIVersion != "" || np.Kind != "" {
				t.Fatal("the informer's object was changed")
			}
		})
	}
}
