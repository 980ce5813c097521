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
package source
