package policy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apiary-net/apiary/policy"
	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
	"github.com/apiary-net/apiary/policy/selectorcache"
)

// The benchmark workload: benchIdentities identities labelled
// app=<n%100>, instance=<n>, namespace default, cluster default, and
// benchPolicies CiliumNetworkPolicies where policy i selects app=i%100
// and allows ingress from app=(i%100 + 1 + i/100) % 100 on 80/TCP.
// These benchmarks time apiary's engine alone, for profiling
// (-cpuprofile, -memprofile); `make bench` runs the same workload
// through apiary and Cilium side by side (hack/bench/cmd/policybench).
const (
	benchIdentities = 10_000
	benchPolicies   = 1_000
	benchApps       = 100
)

func benchIdentity(n int) *identity.Identity {
	return &identity.Identity{ID: identity.NumericIdentity(identity.MinAllocationIdentity + n), Labels: labels.FromSlice([]labels.Label{
		labels.New(labels.SourceK8s, "app", fmt.Sprint(n%benchApps)),
		labels.New(labels.SourceK8s, "instance", fmt.Sprint(n)),
		labels.New(labels.SourceK8s, labels.KeyPodNamespace, "default"),
		labels.New(labels.SourceK8s, labels.KeyPolicyCluster, "default"),
	})}
}

func benchIdentityList(n int) []*identity.Identity {
	out := make([]*identity.Identity, n)
	for i := range out {
		out[i] = benchIdentity(i)
	}
	return out
}

func benchPolicyYAML() []byte {
	var b strings.Builder
	for i := range benchPolicies {
		fmt.Fprintf(&b, `---
apiVersion: cilium.io/v2
kind: CiliumNetworkPolicy
metadata: {name: p%d, namespace: default}
spec:
  endpointSelector: {matchLabels: {app: "%d"}}
  ingress:
  - fromEndpoints: [{matchLabels: {app: "%d"}}]
    toPorts: [{ports: [{port: "80", protocol: TCP}]}]
`, i, i%benchApps, (i%benchApps+1+i/benchApps)%benchApps)
	}
	return []byte(b.String())
}

// benchEngine returns an engine with the workload's identities and
// policies.
func benchEngine(b *testing.B) engine {
	e := newEngine(benchIdentityList(benchIdentities)...)
	e.repo.Add(parseRules(b, string(benchPolicyYAML()))...)
	return e
}

// BenchmarkAddIdentities adds the 10k identities one change at a time
// to a cache holding the selectors of one endpoint per app.
func BenchmarkAddIdentities(b *testing.B) {
	idents := benchIdentityList(benchIdentities)
	rules := parseRules(b, string(benchPolicyYAML()))
	for b.Loop() {
		b.StopTimer()
		e := newEngine()
		e.repo.Add(rules...)
		for app := range benchApps {
			e.endpoint(idents[app])
		}
		b.StartTimer()
		for _, id := range idents {
			e.cache.OnIdentitiesChanged(added(id))
		}
	}
}

// BenchmarkParseAndInsertPolicies parses the 1k policies from YAML and
// adds their rules to a repository.
func BenchmarkParseAndInsertPolicies(b *testing.B) {
	doc := benchPolicyYAML()
	for b.Loop() {
		pols, err := policyapi.ParseDocuments("bench.yaml", doc, policyapi.DefaultOptions())
		if err != nil {
			b.Fatal(err)
		}
		repo := policy.NewRepository(selectorcache.New())
		for _, p := range pols {
			repo.ReplaceByLabels(p.Labels, p.Rules...)
		}
	}
}

// BenchmarkColdMapState resolves the policy of an app=0 identity at a
// new revision and distills its endpoint's map state.
func BenchmarkColdMapState(b *testing.B) {
	e := benchEngine(b)
	ident := benchIdentity(0)
	for b.Loop() {
		e.repo.Add()
		ep := e.endpoint(ident)
		ep.Detach()
	}
}

// BenchmarkWarmMapState distills the map state of another app=0
// endpoint from the identity's already resolved policy.
func BenchmarkWarmMapState(b *testing.B) {
	e := benchEngine(b)
	ident := benchIdentity(0)
	sp := e.repo.Resolve(ident)
	keys := len(sp.DistillPolicy(nil).MapState())
	for b.Loop() {
		sp.DistillPolicy(nil).Detach()
	}
	b.ReportMetric(float64(keys), "keys")
}

// BenchmarkAddSelectedIdentity adds or deletes one identity an app=0
// endpoint's policy selects (app=1, allowed by policy 0) and takes the
// resulting one-key map-state delta; it alternates rounds of adding and
// deleting a pool of identities built beforehand.
func BenchmarkAddSelectedIdentity(b *testing.B) {
	e := benchEngine(b)
	ep := e.endpoint(benchIdentity(0))
	ep.ConsumeMapChanges()
	pool := make([][]identity.Change, 1000)
	for i := range pool {
		pool[i] = added(benchIdentity(benchIdentities + 1 + i*benchApps))
	}
	k := 0
	for b.Loop() {
		ch := pool[k%len(pool)]
		ch[0].Kind = identity.Added
		if k/len(pool)%2 == 1 {
			ch[0].Kind = identity.Deleted
		}
		e.cache.OnIdentitiesChanged(ch)
		if n := ep.ConsumeMapChanges().Len(); n != 1 {
			b.Fatalf("%d map changes, want 1", n)
		}
		k++
	}
}
