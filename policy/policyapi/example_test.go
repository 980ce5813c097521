package policyapi_test

import (
	"fmt"

	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// ExampleParseDocuments parses the L4 policy of the ClusterMesh example
// for an agent in cluster1 and asks its rule who may reach the database.
func ExampleParseDocuments() {
	doc := `
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata:
  name: l4-policy
spec:
  endpointSelector:
    matchLabels: {app: protected-db}
  ingress:
  - fromEndpoints:
    - matchLabels: {app: employee}
    toPorts:
    - ports: [{port: "6379", protocol: TCP}]
`
	policies, err := policyapi.ParseDocuments("l4-policy.yaml", []byte(doc), policyapi.NewOptions("cluster1", policyapi.DefaultConfig))
	if err != nil {
		fmt.Println(err)
		return
	}
	rule := policies[0].Rules[0]
	fmt.Println("subject:", rule.Subject.Selector)
	fmt.Println("ingress default deny:", rule.DefaultDeny.Ingress)
	entry := rule.Ingress[0]
	fmt.Println("peer:", entry.Peers[0].Selector)
	fmt.Println("ports:", entry.Ports)

	employee := func(cluster string) labels.Labels {
		return labels.MustParseList("k8s:app=employee", "k8s:io.kubernetes.pod.namespace=default",
			"k8s:io.cilium.k8s.policy.cluster="+cluster)
	}
	fmt.Println("employee of cluster1:", entry.Peers[0].Matches(employee("cluster1")))
	fmt.Println("employee of cluster2:", entry.Peers[0].Matches(employee("cluster2")))

	_, err = policyapi.ParseDocuments("bad.yaml", []byte(doc+"    fromRequires: [{matchLabels: {env: prod}}]\n"), policyapi.DefaultOptions())
	fmt.Println(err)
	// Output:
	// subject: any:app=protected-db,k8s:io.kubernetes.pod.namespace=default
	// ingress default deny: true
	// peer: any:app=employee,k8s:io.cilium.k8s.policy.cluster=cluster1,k8s:io.kubernetes.pod.namespace=default
	// ports: [6379/TCP]
	// employee of cluster1: true
	// employee of cluster2: false
	// bad.yaml: document 1 (CiliumNetworkPolicy default/l4-policy): spec.ingress[0].fromRequires: not supported: requirement selectors (fromRequires/toRequires) are not implemented; add the requirement to each selector
}
