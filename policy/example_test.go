package policy_test

import (
	"fmt"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// Example shows the engine's flow: rules into a repository, an
// identity's policy resolved and distilled into an endpoint's map state,
// identity churn applied incrementally, and verdicts read off.
func Example() {
	pols, err := policyapi.ParseDocuments("l4.yaml", []byte(cnpHeader+
		"  ingress:\n  - fromEndpoints: [{matchLabels: {app: employee}}]\n    toPorts: [{ports: [{port: \"6379\", protocol: TCP}]}]\n"),
		policyapi.DefaultOptions())
	if err != nil {
		panic(err)
	}
	cache := selectorcache.New() // registered as an identity.Observer in the agent
	cache.OnIdentitiesChanged(added(db))
	repo := policy.NewRepository(cache)
	for _, p := range pols {
		repo.ReplaceByLabels(p.Labels, p.Rules...)
	}

	ep := repo.Resolve(db).DistillPolicy(nil)
	fmt.Println("keys:", len(ep.MapState()))

	cache.OnIdentitiesChanged(added(employee))
	changes := ep.ConsumeMapChanges()
	fmt.Println("changed keys:", changes.Len())
	ms := ep.MapState()
	fmt.Println("employee to 6379/TCP:", policy.Verdict(ms, employee.ID, policy.Ingress, policy.ProtoTCP, 6379))
	fmt.Println("employee to 80/TCP:", policy.Verdict(ms, employee.ID, policy.Ingress, policy.ProtoTCP, 80))
	// Output:
	// keys: 1
	// changed keys: 1
	// employee to 6379/TCP: true
	// employee to 80/TCP: false
}
