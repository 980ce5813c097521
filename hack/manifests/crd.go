package manifests

import (
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Group and Version are those of Cilium's policy CRDs.
const (
	Group   = "cilium.io"
	Version = "v2"
)

// CRDs returns the CiliumNetworkPolicy, CiliumClusterwideNetworkPolicy,
// CiliumIdentity and CiliumEndpoint CRDs, with Cilium's names, short
// names and categories.
func CRDs() []*apiextv1.CustomResourceDefinition {
	return []*apiextv1.CustomResourceDefinition{
		policyCRD(apiextv1.CustomResourceDefinitionNames{Kind: "CiliumNetworkPolicy", ListKind: "CiliumNetworkPolicyList",
			Plural: "ciliumnetworkpolicies", Singular: "ciliumnetworkpolicy", ShortNames: []string{"cnp", "ciliumnp"},
			Categories: []string{"cilium", "ciliumpolicy"}}, apiextv1.NamespaceScoped,
			"CiliumNetworkPolicy is a namespaced Cilium network policy: its rules select endpoints of its namespace."),
		policyCRD(apiextv1.CustomResourceDefinitionNames{Kind: "CiliumClusterwideNetworkPolicy", ListKind: "CiliumClusterwideNetworkPolicyList",
			Plural: "ciliumclusterwidenetworkpolicies", Singular: "ciliumclusterwidenetworkpolicy", ShortNames: []string{"ccnp"},
			Categories: []string{"cilium", "ciliumpolicy"}}, apiextv1.ClusterScoped,
			"CiliumClusterwideNetworkPolicy is a cluster-wide Cilium network policy: its rules select endpoints (or nodes) of every namespace."),
		ciliumIdentityCRD(),
		ciliumEndpointCRD(),
	}
}

func policyCRD(names apiextv1.CustomResourceDefinitionNames, scope apiextv1.ResourceScope, desc string) *apiextv1.CustomResourceDefinition {
	schema := object(desc, map[string]apiextv1.JSONSchemaProps{
		"apiVersion": str("APIVersion of the object."),
		"kind":       str("Kind of the object."),
		"metadata":   {Type: "object"},
		"spec":       rule(),
		"specs":      arrayOf("Several rules in one object.", rule()),
		"status":     open("Status the agents report (passed through)."),
	})
	return &apiextv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
		ObjectMeta: metav1.ObjectMeta{Name: names.Plural + "." + Group, Labels: map[string]string{"app.kubernetes.io/part-of": "apiary"}},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: Group,
			Names: names,
			Scope: scope,
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: Version, Served: true, Storage: true,
				Schema:       &apiextv1.CustomResourceValidation{OpenAPIV3Schema: &schema},
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
				AdditionalPrinterColumns: []apiextv1.CustomResourceColumnDefinition{
					{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
				},
			}},
		},
	}
}
