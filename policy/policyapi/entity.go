package policyapi

import (
	"slices"

	"github.com/apiary-net/apiary/policy/labels"
)

// Entity names peers that are not pods selected by labels: the host, the
// world outside the cluster, the cluster as a whole (fromEntities and
// toEntities in Cilium's rules).
type Entity string

// Entities apiary supports, with Cilium's names and meaning.
const (
	// EntityAll is every peer: all endpoints of every cluster and the world.
	EntityAll Entity = "all"
	// EntityWorld is every peer outside the cluster (reserved:world and
	// its per-family forms, and so every CIDR identity).
	EntityWorld Entity = "world"
	// EntityWorldIPv4 is the IPv4 part of the world.
	EntityWorldIPv4 Entity = "world-ipv4"
	// EntityWorldIPv6 is the IPv6 part of the world.
	EntityWorldIPv6 Entity = "world-ipv6"
	// EntityCluster is everything in the local cluster: its endpoints
	// (io.cilium.k8s.policy.cluster=<local>) and the reserved identities
	// host, remote-node, init, ingress, health, unmanaged and
	// kube-apiserver. Endpoints of other meshed clusters are not in it.
	EntityCluster Entity = "cluster"
	// EntityClusterMesh is everything in every cluster of the mesh: what
	// cluster selects plus the endpoints of every other meshed cluster
	// (any identity labelled io.cilium.k8s.policy.cluster), as Cilium
	// 1.20's cluster-mesh entity.
	EntityClusterMesh Entity = "cluster-mesh"
	// EntityNone selects nothing (Cilium's none): a rule whose only peer
	// it is allows nothing, but still puts its direction in default deny.
	EntityNone Entity = "none"
	// EntityHost is the local node (reserved:host).
	EntityHost Entity = "host"
	// EntityRemoteNode is every other node of the cluster.
	EntityRemoteNode Entity = "remote-node"
	// EntityKubeAPIServer is the Kubernetes API server.
	EntityKubeAPIServer Entity = "kube-apiserver"
	// EntityIngress is the ingress proxy's identity.
	EntityIngress Entity = "ingress"
	// EntityInit is endpoints whose labels are not known yet.
	EntityInit Entity = "init"
	// EntityHealth is the agents' health-check endpoints.
	EntityHealth Entity = "health"
	// EntityUnmanaged is pods not managed by the agent.
	EntityUnmanaged Entity = "unmanaged"
)

// reservedNames are the reserved identities, the keys of reserved:
// labels (identity.ReservedLabels).
var reservedNames = []string{
	"host", "world", "unmanaged", "health", "init", "remote-node",
	"kube-apiserver", "ingress", "world-ipv4", "world-ipv6",
}

// entityReserved maps entities that stand for reserved identities to
// their names.
var entityReserved = map[Entity][]string{
	EntityWorld:         {"world", "world-ipv4", "world-ipv6"},
	EntityWorldIPv4:     {"world-ipv4"},
	EntityWorldIPv6:     {"world-ipv6"},
	EntityHost:          {"host"},
	EntityRemoteNode:    {"remote-node"},
	EntityKubeAPIServer: {"kube-apiserver"},
	EntityIngress:       {"ingress"},
	EntityInit:          {"init"},
	EntityHealth:        {"health"},
	EntityUnmanaged:     {"unmanaged"},
	EntityCluster:       {"host", "remote-node", "init", "ingress", "health", "unmanaged", "kube-apiserver"},
	EntityClusterMesh:   {"host", "remote-node", "init", "ingress", "health", "unmanaged", "kube-apiserver"},
	EntityNone:          {},
}

// Entities returns every supported entity, sorted.
func Entities() []Entity {
	out := []Entity{EntityAll}
	for e := range entityReserved {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

// Selectors returns the selectors e stands for in the cluster named
// clusterName; a peer matches e when it matches any of them (none has
// no selector, so matches nothing). ok is false for an unknown entity.
func (e Entity) Selectors(clusterName string) (sels []EndpointSelector, ok bool) {
	if e == EntityAll {
		return []EndpointSelector{{}}, true
	}
	names, ok := entityReserved[e]
	if !ok {
		return nil, false
	}
	for _, n := range names {
		sels = append(sels, SelectLabels(labels.New(labels.SourceReserved, n, "")))
	}
	switch e {
	case EntityCluster:
		sels = append(sels, SelectLabels(labels.New(labels.SourceK8s, labels.KeyPolicyCluster, clusterName)))
	case EntityClusterMesh:
		sels = append(sels, NewSelector(Requirement{Source: labels.SourceK8s, Key: labels.KeyPolicyCluster, Operator: OpExists}))
	}
	return sels, true
}
