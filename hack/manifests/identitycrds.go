package manifests

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The CiliumIdentity and CiliumEndpoint CRDs of identity allocation mode
// crd, with Cilium's names, scope, printer columns and the fields its
// v1.20 schema has (pkg/k8s/apis/cilium.io/v2: CiliumIdentity,
// CiliumEndpoint and EndpointStatus); the parts of the endpoint status
// apiary does not write (controllers, health, log, policy, encryption)
// are open, so that objects Cilium's agent wrote validate too.

func ciliumIdentityCRD() *apiextv1.CustomResourceDefinition {
	schema := object("CiliumIdentity is a security identity: its name is the numeric identity, "+
		"security-labels the labels that define it.", map[string]apiextv1.JSONSchemaProps{
		"apiVersion": str("APIVersion of the object."),
		"kind":       str("Kind of the object."),
		"metadata":   {Type: "object"},
		"security-labels": {Type: "object", Description: "SecurityLabels is the source-of-truth set of labels for this identity (\"source:key\": value).",
			AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
	}, "metadata", "security-labels")
	return customCRD(apiextv1.CustomResourceDefinitionNames{Kind: "CiliumIdentity", ListKind: "CiliumIdentityList",
		Plural: "ciliumidentities", Singular: "ciliumidentity", ShortNames: []string{"ciliumid"}, Categories: []string{"cilium"}},
		apiextv1.ClusterScoped, schema, &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
		[]apiextv1.CustomResourceColumnDefinition{
			{Name: "Namespace", Type: "string", Description: "The namespace of the entity", JSONPath: `.metadata.labels.io\.kubernetes\.pod\.namespace`},
			{Name: "Age", Type: "date", Description: "The age of the identity", JSONPath: ".metadata.creationTimestamp"},
		})
}

func ciliumEndpointCRD() *apiextv1.CustomResourceDefinition {
	integer := func(desc string) apiextv1.JSONSchemaProps {
		return apiextv1.JSONSchemaProps{Type: "integer", Description: desc}
	}
	status := object("EndpointStatus is the status of a Cilium endpoint.", map[string]apiextv1.JSONSchemaProps{
		"id": {Type: "integer", Format: "int64", Description: "ID is the cilium-agent-local ID of the endpoint."},
		"identity": object("Identity is the security identity associated with the endpoint.", map[string]apiextv1.JSONSchemaProps{
			"id":     {Type: "integer", Format: "int64", Description: "ID is the numeric identity of the endpoint."},
			"labels": arrayOf("Labels is the list of labels associated with the identity.", str("")),
		}),
		"networking": object("Networking is the networking properties of the endpoint.", map[string]apiextv1.JSONSchemaProps{
			"addressing": arrayOf("IPv4 and IPv6 addresses assigned to this endpoint.", object("AddressPair is a pair of IPv4 and/or IPv6 address.",
				map[string]apiextv1.JSONSchemaProps{"ipv4": str("IPv4 address."), "ipv6": str("IPv6 address.")})),
			"node": str("NodeIP is the IP of the node the endpoint is running on."),
		}, "addressing"),
		"named-ports": arrayOf("NamedPorts: named layer 4 port and protocol pairs used in network policy.", object("Port is a layer 4 port / protocol pair.",
			map[string]apiextv1.JSONSchemaProps{"name": str("Layer 4 port name."), "port": integer("Layer 4 port number."),
				"protocol": str("Layer 4 protocol: TCP, UDP, SCTP, ICMP, ICMPV6, ANY.")})),
		"state": enum("State is the state of the endpoint.", "creating", "waiting-for-identity", "not-ready",
			"waiting-to-regenerate", "regenerating", "restoring", "ready", "disconnecting", "disconnected", "invalid"),
		"service-account":      str("ServiceAccount is the service account associated with the endpoint."),
		"external-identifiers": open("Identifiers of the endpoint apart from the pod name (container runtime ids)."),
		"controllers":          {Type: "array", Description: "Failing controllers.", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: ptr(open(""))}},
		"health":               open("Endpoint and subcomponent health."),
		"log":                  {Type: "array", Description: "Last warning and error log entries.", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: ptr(open(""))}},
		"encryption":           open("Encryption configuration of the node."),
		"policy":               open("The endpoint's policy: allowed identities by direction."),
	})
	schema := object("CiliumEndpoint is the status of a Cilium endpoint (a pod), published by the node that hosts it.",
		map[string]apiextv1.JSONSchemaProps{
			"apiVersion": str("APIVersion of the object."),
			"kind":       str("Kind of the object."),
			"metadata":   {Type: "object"},
			"status":     status,
		}, "metadata")
	return customCRD(apiextv1.CustomResourceDefinitionNames{Kind: "CiliumEndpoint", ListKind: "CiliumEndpointList",
		Plural: "ciliumendpoints", Singular: "ciliumendpoint", ShortNames: []string{"cep", "ciliumep"}, Categories: []string{"cilium"}},
		apiextv1.NamespaceScoped, schema, &apiextv1.CustomResourceSubresources{},
		[]apiextv1.CustomResourceColumnDefinition{
			{Name: "Security Identity", Type: "integer", Description: "Security Identity", JSONPath: ".status.identity.id"},
			{Name: "Ingress Enforcement", Type: "string", Description: "Ingress enforcement in the endpoint", JSONPath: ".status.policy.ingress.state", Priority: 1},
			{Name: "Egress Enforcement", Type: "string", Description: "Egress enforcement in the endpoint", JSONPath: ".status.policy.egress.state", Priority: 1},
			{Name: "Endpoint State", Type: "string", Description: "Endpoint current state", JSONPath: ".status.state"},
			{Name: "IPv4", Type: "string", Description: "Endpoint IPv4 address", JSONPath: ".status.networking.addressing[0].ipv4"},
			{Name: "IPv6", Type: "string", Description: "Endpoint IPv6 address", JSONPath: ".status.networking.addressing[0].ipv6"},
		})
}

func customCRD(names apiextv1.CustomResourceDefinitionNames, scope apiextv1.ResourceScope, schema apiextv1.JSONSchemaProps,
	sub *apiextv1.CustomResourceSubresources, columns []apiextv1.CustomResourceColumnDefinition) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + Group, Labels: map[string]string{"app.kubernetes.io/part-of": "apiary"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: Group, Names: names, Scope: scope,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: Version, Served: true, Storage: true,
				Schema:                   &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
				Subresources:             sub,
				AdditionalPrinterColumns: columns,
			}},
		},
	}
}
