package simulate_test

import (
	"fmt"
	"os"

	"github.com/apiary-net/apiary/policy/simulate"
)

// Example loads a scenario with one policy and prints the verdicts of its
// queries, then why the second one was denied.
func Example() {
	sim, err := simulate.Load("scenario.yaml", []byte(`
namespaces: [{name: shop}]
endpoints:
  - {name: web, namespace: shop, labels: {app: web}, ips: [10.0.0.1]}
  - {name: db, namespace: shop, labels: {app: db}, ips: [10.0.0.2]}
policies:
  - apiVersion: networking.k8s.io/v1
    kind: NetworkPolicy
    metadata: {name: db-from-web, namespace: shop}
    spec:
      podSelector: {matchLabels: {app: db}}
      ingress: [{from: [{podSelector: {matchLabels: {app: web}}}], ports: [{port: 5432}]}]
queries:
  - {from: shop/web, to: shop/db, port: 5432}
  - {from: 192.0.2.1, to: 10.0.0.2, port: 5432}
`))
	if err != nil {
		panic(err)
	}
	if err := simulate.WriteText(os.Stdout, sim.Run()); err != nil {
		panic(err)
	}
	fmt.Println(sim.RunExplain()[1].Ingress)
	// Output:
	// shop/web -> shop/db 5432/TCP ALLOWED
	// 192.0.2.1 -> 10.0.0.2 5432/TCP DENIED
	// denied: default deny (isolated by NetworkPolicy shop/db-from-web spec, no rule allows it)
}
