// Package source names where a piece of state came from (the local agent,
// the kvstore, Kubernetes, a remote cluster, ...) and ranks the sources
// with Cilium's precedence: kube-apiserver > local > kvstore >
// custom-resource > k8s > clustermesh > directory > api > generated >
// restored > unspec.
//
// The ipcache uses the ranking to decide which of several owners of a
// prefix wins (a lower source never overwrites a higher one), and the node
// manager to decide which updates of a node it accepts. The strings are
// Cilium's, so they appear unchanged in kvstore values (a node's "Source")
// and in the API.
//
// It is part of the policy engine: it may import the leaves and the
// engine's packages (policy, policy/identity, policy/labels,
// policy/policyapi, policy/selectorcache and policy/source), never cells
// or kvstore, so it holds no agent glue (docs/design.md, Layers).
package source
