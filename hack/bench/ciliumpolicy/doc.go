// Package ciliumpolicy runs Cilium's own policy engine
// (github.com/cilium/cilium/pkg/policy, v1.20) the way the Cilium agent
// wires it, as the peer of apiary's engine in `make bench` and as the
// judge of the differential test (package policydiff). It lives in the
// hack/bench module so that Cilium never enters apiary's go.mod.
//
// What the agent does, and this package repeats:
//
//   - api.InitEntities(clusterName) before anything parses a policy
//     (pkg/policy/cell);
//   - one Repository from policy.NewPolicyRepository with the reserved
//     identities in its (peer) selector cache;
//   - every identity of the cluster in the peer selector cache
//     (SelectorCache.UpdateIdentities, as the identity watcher does);
//     local endpoints' identities also in the subject selector cache
//     (Repository.UpdateIdentities, as the policy computer does before
//     resolving them);
//   - policies decoded from YAML into the typed objects the agent's
//     informers hand it, parsed with CiliumNetworkPolicy.Parse /
//     CiliumClusterwideNetworkPolicy.Parse / k8s.ParseNetworkPolicy,
//     converted with utils.RulesToPolicyEntries and inserted with
//     Repository.ReplaceByResource, one resource per object;
//   - ComputeSelectorPolicy -> DistillPolicy(owner) -> Ready per
//     endpoint, ConsumeMapChanges after identity updates.
//
// The entity selectors and the policy enforcement mode are process-wide
// in Cilium, so one process (a benchmark program, a test binary) uses
// one cluster name.
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package ciliumpolicy
