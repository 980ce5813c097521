package source

import (
	"fmt"
	"slices"
	"strings"
)

// Source is where a piece of state came from.
type Source string

// The sources, with Cilium's names.
const (
	// KubeAPIServer is state that describes the kube-apiserver (its IPs);
	// only kube-apiserver state overwrites it.
	KubeAPIServer Source = "kube-apiserver"
	// Local is state this agent derived itself (its own node, its
	// endpoints).
	Local Source = "local"
	// KVStore is state read from this cluster's kvstore.
	KVStore Source = "kvstore"
	// CustomResource is state from Kubernetes custom resources
	// (CiliumNode, ...).
	CustomResource Source = "custom-resource"
	// Kubernetes is state from core Kubernetes objects.
	Kubernetes Source = "k8s"
	// ClusterMesh is state read from a remote cluster.
	ClusterMesh Source = "clustermesh"
	// Directory is state read from files in a directory.
	Directory Source = "directory"
	// LocalAPI is state given through this agent's REST API.
	LocalAPI Source = "api"
	// Generated is state the agent generated (CIDR prefixes of policies);
	// every source but Restored overwrites it.
	Generated Source = "generated"
	// Restored is state restored from the previous run of the agent.
	Restored Source = "restored"
	// Unspec is an unknown source; every source overwrites it.
	Unspec Source = "unspec"
)

// precedence lists the sources from the highest to the lowest.
var precedence = []Source{
	KubeAPIServer, Local, KVStore, CustomResource, Kubernetes, ClusterMesh,
	Directory, LocalAPI, Generated, Restored, Unspec,
}

// All returns every source, from the highest precedence to the lowest.
func All() []Source { return slices.Clone(precedence) }

// rank is the index of s in precedence; unknown sources rank with Unspec.
func rank(s Source) int {
	if i := slices.Index(precedence, s); i >= 0 {
		return i
	}
	return len(precedence) - 1
}

// Compare returns a negative number when a has higher precedence than b,
// zero when they rank the same and a positive number otherwise. Sorting
// with Compare puts the highest source first.
func Compare(a, b Source) int { return rank(a) - rank(b) }

// AllowOverwrite reports whether state from source next may replace state
// from source existing: only a source of the same or higher precedence may.
func AllowOverwrite(existing, next Source) bool { return rank(next) <= rank(existing) }

// Parse checks that s is one of the known sources.
func Parse(s string) (Source, error) {
	if slices.Contains(precedence, Source(s)) {
		return Source(s), nil
	}
	names := make([]string, len(precedence))
	for i, p := range precedence {
		names[i] = string(p)
	}
	return "", fmt.Errorf("unknown source %q (known: %s)", s, strings.Join(names, ", "))
}
