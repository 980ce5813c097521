// Package policydiff checks apiary's policy engine against Cilium's on
// generated scenarios (package policy/simulate/scenariogen): namespaces,
// pods of two clusters with labels and named ports, NetworkPolicies,
// CiliumNetworkPolicies and CiliumClusterwideNetworkPolicies using L3/L4
// features, and random connections. Each scenario goes through apiary's
// offline simulator (package policy/simulate) and through Cilium's
// engine wired as its agent wires it (package ciliumpolicy); the verdict
// of every direction that has a policy subject (the source's egress, the
// destination's ingress) must agree. The generator only writes policies
// both accept, and no input apiary decides differently on purpose (see
// Options).
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package policydiff
