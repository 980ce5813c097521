package cepsync

import (
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/apiary-net/apiary/datapath/endpoint"
	"github.com/apiary-net/apiary/policy/labels"
)

// Status returns the CiliumEndpoint status of ep on the node with IP
// nodeIP, with the identity's labels: Cilium's EndpointStatus fields id,
// identity{id,labels}, networking{addressing,node}, named-ports, state,
// external-identifiers and service-account, in the values the JSON of
// the object decodes to (int64 numbers).
func Status(ep endpoint.Endpoint, nodeIP string, identityLabels labels.Labels) map[string]any {
	addr := map[string]any{}
	if ep.IPv4.IsValid() {
		addr["ipv4"] = ep.IPv4.String()
	}
	if ep.IPv6.IsValid() {
		addr["ipv6"] = ep.IPv6.String()
	}
	lbls := make([]any, 0, len(identityLabels))
	for _, l := range identityLabels {
		lbls = append(lbls, l.String())
	}
	st := map[string]any{
		"id":         int64(ep.ID),
		"identity":   map[string]any{"id": int64(ep.Identity), "labels": lbls},
		"networking": map[string]any{"addressing": []any{addr}, "node": nodeIP},
		"state":      string(ep.State),
		"external-identifiers": map[string]any{"container-id": ep.ContainerID, "k8s-namespace": ep.Pod.Namespace,
			"k8s-pod-name": ep.Pod.Name, "pod-name": ep.Pod.String()},
	}
	if len(ep.NamedPorts) > 0 {
		ports := make([]any, 0, len(ep.NamedPorts))
		for _, p := range ep.NamedPorts {
			p = p.Normalized()
			ports = append(ports, map[string]any{"name": p.Name, "port": int64(p.Port), "protocol": strings.ToUpper(string(p.Protocol))})
		}
		st["named-ports"] = ports
	}
	if l, ok := ep.Labels.Get(labels.KeyServiceAccount); ok {
		st["service-account"] = l.Value
	}
	return st
}

// newObject returns the CiliumEndpoint of a pod with status st, owned by
// the pod.
func newObject(pod endpoint.PodName, podUID types.UID, st map[string]any) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cilium.io/v2", "kind": "CiliumEndpoint",
		"metadata": map[string]any{"name": pod.Name, "namespace": pod.Namespace},
		"status":   st,
	}}
	setOwner(obj, pod.Name, podUID)
	return obj
}

// setOwner makes the pod the object's owner.
func setOwner(obj *unstructured.Unstructured, podName string, podUID types.UID) {
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: podName, UID: podUID}})
}

// ownedBy reports whether the pod with uid is the object's owner.
func ownedBy(obj *unstructured.Unstructured, podUID types.UID) bool {
	refs := obj.GetOwnerReferences()
	return len(refs) == 1 && refs[0].UID == podUID && refs[0].Kind == "Pod"
}

// NodeOf returns the node IP of a CiliumEndpoint (status.networking.node).
func NodeOf(obj *unstructured.Unstructured) string {
	n, _, _ := unstructured.NestedString(obj.Object, "status", "networking", "node")
	return n
}

// sameStatus reports whether the object's status is st.
func sameStatus(obj *unstructured.Unstructured, st map[string]any) bool {
	cur, _, _ := unstructured.NestedMap(obj.Object, "status")
	return equalValues(cur, st)
}

// equalValues compares JSON values (maps, slices, strings, int64s, bools).
func equalValues(a, b any) bool {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		return ok && len(av) == len(bv) && !slices.ContainsFunc(slices.Collect(maps.Keys(av)), func(k string) bool {
			w, ok := bv[k]
			return !ok || !equalValues(av[k], w)
		})
	case []any:
		bv, ok := b.([]any)
		return ok && slices.EqualFunc(av, bv, equalValues)
	}
	return a == b
}
