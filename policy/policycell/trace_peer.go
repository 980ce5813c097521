package policycell

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"github.com/apiary-net/apiary/policy/identity"
	"github.com/apiary-net/apiary/policy/ipcache"
	"github.com/apiary-net/apiary/policy/labels"
	"github.com/apiary-net/apiary/policy/policyapi"
)

// tracePeer is one side of a trace: the labels of its identity and, when
// it was named as a pod or an address, what the ipcache says of it.
type tracePeer struct {
	labels labels.Labels
	// id is the identity found through the ipcache; nil for a label
	// list, whose identity the trace allocates.
	id *identity.Identity
	// pod is "cluster/ns/name (ip)" or "ip" when the side was resolved
	// through the ipcache; empty for a label list.
	pod string
	// named are the pod's own named ports, for its ingress rules (its
	// egress rules resolve names against the destination's).
	named []policyapi.NamedPort
}

// isPodRef reports whether s is "ns/pod" or "cluster/ns/pod" rather than
// a label ("k8s:app=web", "ns:default").
func isPodRef(s string) bool {
	return strings.Contains(s, "/") && !strings.ContainsAny(s, ":=")
}

// isAddr reports whether s is an IP address.
func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// resolvePod finds the pod named ref ("ns/pod" in the local cluster or
// "cluster/ns/pod") or holding the address ref in the ipcache, and
// returns the labels of its identity and its named ports. The ipcache
// knows the pods of this cluster's nodes through the kvstore and those of
// meshed clusters; the identity must be known to the allocator.
func resolvePod(ipc ipcache.IPCache, alloc identity.Allocator, localCluster, ref string) (tracePeer, error) {
	if ipc == nil {
		return tracePeer{}, fmt.Errorf("%q: pods and addresses are resolved through the ipcache, which this agent does not run; give labels", ref)
	}
	if addr, err := netip.ParseAddr(ref); err == nil {
		e, ok := ipc.LookupByIP(addr)
		if !ok {
			// As in the datapath: an address no entry covers is the world
			// of its family.
			return worldPeer(alloc, addr)
		}
		return peerOfEntry(alloc, e, addr)
	}
	parts := strings.Split(ref, "/")
	cluster := localCluster
	switch len(parts) {
	case 2:
	case 3:
		cluster, parts = parts[0], parts[1:]
	default:
		return tracePeer{}, fmt.Errorf("%q: a pod is ns/name or cluster/ns/name", ref)
	}
	if slices.Contains(parts, "") || cluster == "" {
		return tracePeer{}, fmt.Errorf("%q: a pod is ns/name or cluster/ns/name, none of them empty", ref)
	}
	ns, name := parts[0], parts[1]
	var elsewhere []string
	for _, e := range ipc.Entries() {
		if e.K8sNamespace != ns || e.K8sPodName != name {
			continue
		}
		p, err := peerOfEntry(alloc, e, e.Prefix.Addr())
		if err != nil {
			return tracePeer{}, err
		}
		if c, _ := p.labels.Get(labels.KeyPolicyCluster); c.Value != cluster {
			elsewhere = append(elsewhere, c.Value)
			continue
		}
		return p, nil
	}
	if len(elsewhere) > 0 {
		return tracePeer{}, fmt.Errorf("%q: no pod %s/%s in cluster %s; the ipcache has one in cluster %s (say %s/%s/%s)",
			ref, ns, name, cluster, elsewhere[0], elsewhere[0], ns, name)
	}
	return tracePeer{}, fmt.Errorf("%q: no ipcache entry names pod %s/%s (pods are known once their agent publishes them)", ref, ns, name)
}

// peerOfEntry returns the identity, labels and named ports of the
// ipcache entry e holding addr, and names it "cluster/ns/pod (addr)" for
// a pod, else "addr" (with the entry's prefix when wider).
func peerOfEntry(alloc identity.Allocator, e ipcache.Entry, addr netip.Addr) (tracePeer, error) {
	id := alloc.LookupIdentityByID(e.Identity)
	if id == nil {
		return tracePeer{}, fmt.Errorf("identity %d of ipcache entry %s is unknown to this agent", e.Identity, e.Prefix)
	}
	p := tracePeer{labels: id.Labels, id: id, pod: addr.String()}
	switch {
	case e.K8sPodName != "":
		p.pod = e.K8sNamespace + "/" + e.K8sPodName + " (" + p.pod + ")"
		if cluster, ok := id.Labels.Get(labels.KeyPolicyCluster); ok {
			p.pod = cluster.Value + "/" + p.pod
		}
	case e.Prefix != ipcache.HostPrefix(addr):
		p.pod += " (in " + e.Prefix.String() + ")"
	}
	for _, np := range e.NamedPorts {
		p.named = append(p.named, np.Normalized())
	}
	return p, nil
}

// worldPeer is an address no ipcache entry holds: world-ipv4 or
// world-ipv6, the identity the endpoint programs give it.
func worldPeer(alloc identity.Allocator, addr netip.Addr) (tracePeer, error) {
	world := identity.ReservedWorldIPv6
	if addr.Unmap().Is4() {
		world = identity.ReservedWorldIPv4
	}
	p, err := peerOfEntry(alloc, ipcache.Entry{Prefix: ipcache.HostPrefix(addr), Identity: world}, addr)
	if err != nil {
		return tracePeer{}, err
	}
	p.pod += " (no ipcache entry: " + world.ReservedName() + ")"
	return p, nil
}
